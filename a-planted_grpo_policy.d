planted_grpo_policy.o: /tmp/rl-layers-YUde30/planted_grpo_policy.c \
 build/inc/grpo/policy/policy.h
build/inc/grpo/policy/policy.h:

planted_policy_policy.o: /tmp/rl-layers-YUde30/planted_policy_policy.c \
 build/inc/policy/policy/policy.h
build/inc/policy/policy/policy.h:

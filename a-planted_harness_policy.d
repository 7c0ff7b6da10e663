planted_harness_policy.o: /tmp/rl-layers-YUde30/planted_harness_policy.c \
 build/inc/harness/policy/policy.h
build/inc/harness/policy/policy.h:

planted_policy_common.o: /tmp/rl-layers-YUde30/planted_policy_common.c \
 build/inc/policy/common/err.h
build/inc/policy/common/err.h:

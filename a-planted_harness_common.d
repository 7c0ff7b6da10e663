planted_harness_common.o: /tmp/rl-layers-YUde30/planted_harness_common.c \
 build/inc/harness/common/err.h
build/inc/harness/common/err.h:

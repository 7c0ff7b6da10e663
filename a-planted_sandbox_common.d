planted_sandbox_common.o: /tmp/rl-layers-YUde30/planted_sandbox_common.c \
 build/inc/sandbox/common/err.h
build/inc/sandbox/common/err.h:

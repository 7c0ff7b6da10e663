planted_common_common.o: /tmp/rl-layers-YUde30/planted_common_common.c \
 build/inc/common/common/err.h
build/inc/common/common/err.h:

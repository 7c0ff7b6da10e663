planted_protocol_common.o: \
 /tmp/rl-layers-YUde30/planted_protocol_common.c \
 build/inc/protocol/common/err.h
build/inc/protocol/common/err.h:

planted_protocol_protocol.o: \
 /tmp/rl-layers-YUde30/planted_protocol_protocol.c \
 build/inc/protocol/protocol/chat.h build/inc/protocol/common/buf.h \
 build/inc/protocol/protocol/toolcall.h build/inc/protocol/common/err.h
build/inc/protocol/protocol/chat.h:
build/inc/protocol/common/buf.h:
build/inc/protocol/protocol/toolcall.h:
build/inc/protocol/common/err.h:

planted_harness_protocol.o: \
 /tmp/rl-layers-YUde30/planted_harness_protocol.c \
 build/inc/harness/protocol/chat.h build/inc/harness/common/buf.h \
 build/inc/harness/protocol/toolcall.h build/inc/harness/common/err.h
build/inc/harness/protocol/chat.h:
build/inc/harness/common/buf.h:
build/inc/harness/protocol/toolcall.h:
build/inc/harness/common/err.h:

planted_policy_protocol.o: \
 /tmp/rl-layers-YUde30/planted_policy_protocol.c \
 build/inc/policy/protocol/chat.h build/inc/policy/common/buf.h \
 build/inc/policy/protocol/toolcall.h build/inc/policy/common/err.h
build/inc/policy/protocol/chat.h:
build/inc/policy/common/buf.h:
build/inc/policy/protocol/toolcall.h:
build/inc/policy/common/err.h:

planted_grpo_protocol.o: /tmp/rl-layers-YUde30/planted_grpo_protocol.c \
 build/inc/grpo/protocol/chat.h build/inc/grpo/common/buf.h \
 build/inc/grpo/protocol/toolcall.h build/inc/grpo/common/err.h
build/inc/grpo/protocol/chat.h:
build/inc/grpo/common/buf.h:
build/inc/grpo/protocol/toolcall.h:
build/inc/grpo/common/err.h:

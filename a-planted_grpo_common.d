planted_grpo_common.o: /tmp/rl-layers-YUde30/planted_grpo_common.c \
 build/inc/grpo/common/err.h
build/inc/grpo/common/err.h:

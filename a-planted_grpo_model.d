planted_grpo_model.o: /tmp/rl-layers-YUde30/planted_grpo_model.c \
 build/inc/grpo/model/model.h
build/inc/grpo/model/model.h:

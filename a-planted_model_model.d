planted_model_model.o: /tmp/rl-layers-YUde30/planted_model_model.c \
 build/inc/model/model/model.h
build/inc/model/model/model.h:

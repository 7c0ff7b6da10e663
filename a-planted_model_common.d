planted_model_common.o: /tmp/rl-layers-YUde30/planted_model_common.c \
 build/inc/model/common/err.h
build/inc/model/common/err.h:

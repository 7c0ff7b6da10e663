planted_harness_model.o: /tmp/rl-layers-YUde30/planted_harness_model.c \
 build/inc/harness/model/model.h
build/inc/harness/model/model.h:

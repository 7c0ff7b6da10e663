planted_policy_model.o: /tmp/rl-layers-YUde30/planted_policy_model.c \
 build/inc/policy/model/model.h
build/inc/policy/model/model.h:

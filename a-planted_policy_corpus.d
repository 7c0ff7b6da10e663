planted_policy_corpus.o: /tmp/rl-layers-YUde30/planted_policy_corpus.c \
 build/inc/policy/corpus/task.h
build/inc/policy/corpus/task.h:

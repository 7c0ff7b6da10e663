planted_harness_corpus.o: /tmp/rl-layers-YUde30/planted_harness_corpus.c \
 build/inc/harness/corpus/task.h
build/inc/harness/corpus/task.h:

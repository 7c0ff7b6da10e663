planted_corpus_corpus.o: /tmp/rl-layers-YUde30/planted_corpus_corpus.c \
 build/inc/corpus/corpus/task.h
build/inc/corpus/corpus/task.h:

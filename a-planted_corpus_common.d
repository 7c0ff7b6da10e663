planted_corpus_common.o: /tmp/rl-layers-YUde30/planted_corpus_common.c \
 build/inc/corpus/common/err.h
build/inc/corpus/common/err.h:

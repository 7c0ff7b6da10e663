planted_grpo_corpus.o: /tmp/rl-layers-YUde30/planted_grpo_corpus.c \
 build/inc/grpo/corpus/task.h
build/inc/grpo/corpus/task.h:

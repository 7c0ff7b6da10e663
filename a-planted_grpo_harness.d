planted_grpo_harness.o: /tmp/rl-layers-YUde30/planted_grpo_harness.c \
 build/inc/grpo/harness/episode.h build/inc/grpo/policy/policy.h \
 build/inc/grpo/harness/testrun.h build/inc/grpo/sandbox/sandbox.h \
 build/inc/grpo/corpus/task.h build/inc/grpo/corpus/testres.h \
 build/inc/grpo/common/limits.h
build/inc/grpo/harness/episode.h:
build/inc/grpo/policy/policy.h:
build/inc/grpo/harness/testrun.h:
build/inc/grpo/sandbox/sandbox.h:
build/inc/grpo/corpus/task.h:
build/inc/grpo/corpus/testres.h:
build/inc/grpo/common/limits.h:

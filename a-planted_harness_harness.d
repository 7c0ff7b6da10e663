planted_harness_harness.o: \
 /tmp/rl-layers-YUde30/planted_harness_harness.c \
 build/inc/harness/harness/episode.h build/inc/harness/policy/policy.h \
 build/inc/harness/harness/testrun.h build/inc/harness/sandbox/sandbox.h \
 build/inc/harness/corpus/task.h build/inc/harness/corpus/testres.h \
 build/inc/harness/common/limits.h
build/inc/harness/harness/episode.h:
build/inc/harness/policy/policy.h:
build/inc/harness/harness/testrun.h:
build/inc/harness/sandbox/sandbox.h:
build/inc/harness/corpus/task.h:
build/inc/harness/corpus/testres.h:
build/inc/harness/common/limits.h:

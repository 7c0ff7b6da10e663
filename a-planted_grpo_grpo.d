planted_grpo_grpo.o: /tmp/rl-layers-YUde30/planted_grpo_grpo.c \
 build/inc/grpo/grpo/grpo.h build/inc/grpo/grpo/loss.h \
 build/inc/grpo/model/optim.h build/inc/grpo/harness/episode.h \
 build/inc/grpo/policy/policy.h build/inc/grpo/harness/testrun.h \
 build/inc/grpo/sandbox/sandbox.h build/inc/grpo/corpus/task.h \
 build/inc/grpo/corpus/testres.h build/inc/grpo/common/limits.h \
 build/inc/grpo/common/stats.h build/inc/grpo/model/model.h \
 /usr/include/cjson/cJSON.h
build/inc/grpo/grpo/grpo.h:
build/inc/grpo/grpo/loss.h:
build/inc/grpo/model/optim.h:
build/inc/grpo/harness/episode.h:
build/inc/grpo/policy/policy.h:
build/inc/grpo/harness/testrun.h:
build/inc/grpo/sandbox/sandbox.h:
build/inc/grpo/corpus/task.h:
build/inc/grpo/corpus/testres.h:
build/inc/grpo/common/limits.h:
build/inc/grpo/common/stats.h:
build/inc/grpo/model/model.h:
/usr/include/cjson/cJSON.h:

planted_grpo_sandbox.o: /tmp/rl-layers-YUde30/planted_grpo_sandbox.c \
 build/inc/grpo/sandbox/sandbox.h
build/inc/grpo/sandbox/sandbox.h:

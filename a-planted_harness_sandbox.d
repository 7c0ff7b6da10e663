planted_harness_sandbox.o: \
 /tmp/rl-layers-YUde30/planted_harness_sandbox.c \
 build/inc/harness/sandbox/sandbox.h
build/inc/harness/sandbox/sandbox.h:

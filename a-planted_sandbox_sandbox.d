planted_sandbox_sandbox.o: \
 /tmp/rl-layers-YUde30/planted_sandbox_sandbox.c \
 build/inc/sandbox/sandbox/sandbox.h
build/inc/sandbox/sandbox/sandbox.h:

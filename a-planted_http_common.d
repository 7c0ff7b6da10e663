planted_http_common.o: /tmp/rl-layers-YUde30/planted_http_common.c \
 build/inc/http/common/err.h
build/inc/http/common/err.h:

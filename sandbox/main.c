/* main.c - `sbx`, the sandbox command on its own (sandbox/cmd_sbx.c). */
#include "sandbox/sbx.h"

int main(int argc, char **argv) { return sbx_main(argc, argv); }

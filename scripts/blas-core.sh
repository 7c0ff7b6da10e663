#!/bin/sh
# blas-core.sh [CURRENT] - the newest OpenBLAS kernel set this CPU's
# instructions allow.
#
# OpenBLAS (a DYNAMIC_ARCH build such as Debian's) picks its kernels from
# the CPU model number; on a CPU it does not know (a VM reporting a generic
# "Intel Xeon Processor") it falls back to Prescott's SSE3 kernels, 4-6x
# slower here, even when AVX-512 is there. This prints the kernel set the
# flags in /proc/cpuinfo support: SkylakeX (AVX-512 F/BW/DQ/VL), Haswell
# (AVX2 + FMA), or nothing. With CURRENT (the core OpenBLAS picked, e.g.
# from bench_model --blas-core) it prints only a set newer than CURRENT.
# make bench uses it to run bench_model a second time with
# OPENBLAS_CORETYPE set. The binaries make the same choice themselves at
# start (policy/blascore.c); bench_model does not, so that it can report
# both kernel sets.
flags=$(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
if has avx512f && has avx512bw && has avx512dq && has avx512vl; then
    want=SkylakeX rank=2
elif has avx2 && has fma; then
    want=Haswell rank=1
else
    exit 0
fi
if [ $# -ge 1 ]; then
    case $(echo "$1" | tr 'A-Z' 'a-z') in
    katmai | coppermine | northwood | prescott | banias | core2 | penryn | dunnington | \
        nehalem | sandybridge | atom | opteron | barcelona | bobcat | bulldozer | piledriver | \
        steamroller | excavator) have=0 ;;
    haswell | zen) have=1 ;;
    *) have=2 ;; # SkylakeX and newer, or a name this list does not know: leave it
    esac
    [ "$have" -lt "$rank" ] || exit 0
fi
echo "$want"

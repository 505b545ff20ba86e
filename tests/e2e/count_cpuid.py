"""gdb script: counts the CPUID instructions a library executes in a process.

    gdb -q -batch -ex 'set exec-wrapper env LD_PRELOAD=LIB' \
        -ex 'python LIB="LIB"' -x count_cpuid.py --args PROGRAM

Stops once when LIB is loaded (before its relocation and constructors),
puts a counting breakpoint on every `cpuid` instruction of LIB (found by
disassembling its file with objdump), runs the program to its end and
prints "cpuid executed: N (S sites)".
"""
import os
import subprocess

import gdb  # noqa: E402  (provided by gdb)

lib = os.path.realpath(LIB)  # noqa: F821  (set by the caller: python LIB="...")
dis = subprocess.run(["objdump", "-d", lib], stdout=subprocess.PIPE, check=True).stdout.decode()
sites = [int(line.split(":")[0], 16) for line in dis.splitlines() if line.split("\t")[-1].strip() == "cpuid"]
count = 0


class Counter(gdb.Breakpoint):
    def stop(self):
        global count
        count += 1
        return False


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("catch load " + os.path.basename(lib))
gdb.execute("run", to_string=True)
base = None
for line in gdb.execute("info proc mappings", to_string=True).splitlines():
    f = line.split()
    if f and f[-1] == lib and base is None:
        base = int(f[0], 16) - int(f[3], 16)   # start - file offset
gdb.execute("delete")
for s in sites:
    Counter("*%#x" % (base + s), internal=True)
gdb.execute("continue", to_string=True)
print(f"cpuid executed: {count} ({len(sites)} sites)")

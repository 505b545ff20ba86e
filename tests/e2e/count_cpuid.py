"""gdb script: counts the CPUID instructions a library executes in a process.

    gdb -q -batch -ex 'set exec-wrapper env LD_PRELOAD=LIB' \
        -ex 'python LIB="LIB"' -x count_cpuid.py --args PROGRAM

Stops at each mmap until LIB's code is mapped executable (before ld.so
relocates it: its load-time binding runs during that relocation, and
gdb's shared-library event comes only after it), puts a counting
breakpoint on every `cpuid` instruction of LIB (found by disassembling its
file with objdump), runs the program to its end and prints
"cpuid executed: N (S sites)".
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
gdb.execute("catch syscall mmap")
gdb.execute("run", to_string=True)
base = None
while base is None:
    pid = gdb.selected_inferior().pid
    if not pid:
        break   # the program ended before LIB was mapped
    with open(f"/proc/{pid}/maps") as maps:
        rows = [line.split() for line in maps]
    mine = [r for r in rows if len(r) >= 6 and os.path.realpath(r[5]) == lib]
    if any("x" in r[1] for r in mine):
        first = min(mine, key=lambda r: int(r[0].split("-")[0], 16))
        base = int(first[0].split("-")[0], 16) - int(first[2], 16)   # start - file offset
        break
    gdb.execute("continue", to_string=True)
gdb.execute("delete")
for s in sites if base is not None else []:
    Counter("*%#x" % (base + s), internal=True)
gdb.execute("continue", to_string=True)
print(f"cpuid executed: {count} ({len(sites)} sites)")

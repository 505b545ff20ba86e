/* deny_execmem [-k] [-x] [-w] PROGRAM [ARGS]: runs PROGRAM under a seccomp
 * filter (inherited across exec) that fails with EACCES (-k: kills the
 * process, as OpenSSH's pre-authentication sandbox does)
 *   -x (the default): what SELinux's deny_execmem or PaX MPROTECT refuse,
 *      executable anonymous memory: mprotect and pkey_mprotect asking for
 *      PROT_EXEC, mmap asking for PROT_EXEC with MAP_ANONYMOUS (file-backed
 *      executable mappings, ld.so loading libraries, stay allowed);
 *   -w: mprotect and pkey_mprotect asking for PROT_WRITE (a mapping made
 *      writable after the fact, as a policy that forbids it would). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE AUDIT_ARCH_AARCH64
#endif
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define DENY BPF_STMT(BPF_RET | BPF_K, kill ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int main(int argc, char **argv)
{
	int deny_x = 0, deny_w = 0, kill = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-k") == 0)
			kill = 1;
		else if (strcmp(argv[i], "-x") == 0)
			deny_x = 1;
		else if (strcmp(argv[i], "-w") == 0)
			deny_w = 1;
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: deny_execmem [-k] [-x] [-w] PROGRAM [ARGS]\n");
		return 2;
	}
	if (!deny_x && !deny_w)
		deny_x = 1;
	/* mprotect: refused when prot has any of these bits. */
	unsigned refused = (deny_x ? PROT_EXEC : 0) | (deny_w ? PROT_WRITE : 0);
	struct sock_filter f[] = {
		LOAD(offsetof(struct seccomp_data, arch)),                     /* 0 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_NATIVE, 1, 0),
		ALLOW,                                                         /* 2 */
		LOAD(offsetof(struct seccomp_data, nr)),                       /* 3 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 3, 0),       /* 4: -> 8 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 2, 0),  /* 5: -> 8 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 5, 0),           /* 6: -> 12 */
		ALLOW,                                                         /* 7 */
		LOAD(ARG_LO(2)),                                               /* 8: prot */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, refused, 0, 1),           /* 9: none -> 11 */
		DENY,                                                          /* 10 */
		ALLOW,                                                         /* 11 */
		LOAD(ARG_LO(2)),                                               /* 12: prot */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, deny_x ? PROT_EXEC : 0, 0, 3), /* 13: no exec -> 17 */
		LOAD(ARG_LO(3)),                                               /* 14: flags */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 0, 1),     /* 15: file -> 17 */
		DENY,                                                          /* 16 */
		ALLOW,                                                         /* 17 */
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		fprintf(stderr, "deny_execmem: seccomp: %s\n", strerror(errno));
		return 77;
	}
	/* The filter works: what it should refuse is refused (a killing
	 * filter is taken on trust). */
	if (deny_x && !kill) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED || errno != EACCES) {
			fprintf(stderr, "deny_execmem: the filter let an executable anonymous mapping through\n");
			return 1;
		}
	}
	if (deny_w && !kill) {
		void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || mprotect(p, 4096, PROT_READ | PROT_WRITE) == 0 || errno != EACCES) {
			fprintf(stderr, "deny_execmem: the filter let a mapping be made writable\n");
			return 1;
		}
		munmap(p, 4096);
	}
	execv(argv[i], argv + i);
	fprintf(stderr, "deny_execmem: %s: %s\n", argv[i], strerror(errno));
	return 127;
}

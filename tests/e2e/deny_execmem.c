/* deny_execmem PROGRAM [ARGS]: runs PROGRAM where executable anonymous
 * memory is refused, as SELinux's deny_execmem or PaX MPROTECT refuse it:
 * a seccomp filter (inherited across exec) fails with EACCES
 *   - mprotect and pkey_mprotect asking for PROT_EXEC,
 *   - mmap asking for PROT_EXEC with MAP_ANONYMOUS.
 * File-backed executable mappings (ld.so loading libraries) stay allowed. */
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

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define LOAD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define DENY BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: deny_execmem PROGRAM [ARGS]\n");
		return 2;
	}
	struct sock_filter f[] = {
		LOAD(offsetof(struct seccomp_data, arch)),                     /* 0 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		ALLOW,                                                         /* 2 */
		LOAD(offsetof(struct seccomp_data, nr)),                       /* 3 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 3, 0),       /* 4: -> 8 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 2, 0),  /* 5: -> 8 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 5, 0),           /* 6: -> 12 */
		ALLOW,                                                         /* 7 */
		LOAD(ARG_LO(2)),                                               /* 8: prot */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),         /* 9: no exec -> 11 */
		DENY,                                                          /* 10 */
		ALLOW,                                                         /* 11 */
		LOAD(ARG_LO(2)),                                               /* 12: prot */
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 3),         /* 13: no exec -> 17 */
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
	/* The filter works: an anonymous executable mapping is refused. */
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED || errno != EACCES) {
		fprintf(stderr, "deny_execmem: the filter let an executable anonymous mapping through\n");
		return 1;
	}
	execv(argv[1], argv + 1);
	fprintf(stderr, "deny_execmem: %s: %s\n", argv[1], strerror(errno));
	return 127;
}

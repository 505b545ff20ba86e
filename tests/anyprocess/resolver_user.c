/* Linked -z now against libresolver_lib.so: its relocation calls that
 * library's resolver, before the program and any preloaded library are
 * relocated. */
int resolver_lib_answer(void);

int resolver_user_answer(void)
{
	return resolver_lib_answer();
}

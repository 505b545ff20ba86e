/* Calls the library whose resolver ran before main; prints its answer. */
#include <stdio.h>
int resolver_user_answer(void);
int main(void)
{
	int a = resolver_user_answer();
	printf("%d\n", a);
	return a == 42 ? 0 : 1;
}

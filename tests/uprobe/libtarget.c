/* SPDX-License-Identifier: Apache-2.0 */
/* A shared library for uprobe tests: one exported function (see target.c). */
__attribute__((noinline)) int target_lib_mul(int a, int b)
{
	__asm__ volatile("" ::: "memory");
	return a * b;
}

/*
 * Generator for the C-definition tests: passes pointers to structs,
 * unions and enums whose values are known to uprobe targets, once each
 * (argv[1] times, default 1). The layout exercises C's rules: padding
 * before an 8-byte member, a nested struct, a char array, bitfields that
 * share a unit and one that starts a new one, a union, an enum member and
 * a pointer to another struct.
 */
#include <stdint.h>
#include <stdlib.h>

enum colour { RED, GREEN = 5, BLUE };

struct inner {
	short x;
	short y;
};

struct point {
	char tag;            /* 0 */
	long id;             /* 8: padded */
	struct inner at;     /* 16 */
	char name[6];        /* 20 */
	unsigned int a : 4;  /* unit at 24, bits 16-19 (byte 26 on) */
	unsigned int b : 12; /* unit at 24, bits 20-31 */
	unsigned int c : 20; /* unit at 28: does not fit in what is left of 24's */
	enum colour colour;  /* 32 */
	struct point *next;  /* 40 */
	union {
		uint32_t word;
		uint8_t bytes[4];
	} u;                 /* 48; sizeof 56 */
};

__attribute__((noinline)) int struct_args_point(struct point *p, enum colour colour)
{
	__asm__ volatile("" : : "r"(p), "r"(colour) : "memory");
	return p->tag + (int)colour;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	struct point second = { .tag = 'b', .id = 2, .name = "two" };
	struct point first = {
		.tag = 'a', .id = 1234567890123, .at = { -3, 7 }, .name = "hello",
		.a = 9, .b = 0xabc, .c = 0x54321, .colour = BLUE, .next = &second,
		.u = { .word = 0x04030201 },
	};
	int sum = 0;

	for (long i = 0; i < count; i++)
		sum += struct_args_point(&first, GREEN);
	return sum == 0;
}

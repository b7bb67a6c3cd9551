/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Generator for the C-definition tests: passes pointers to structs,
 * unions and enums whose values are known to uprobe targets, once each
 * (argv[1] times, default 1). The layout exercises C's rules: padding
 * before an 8-byte member, a nested struct, a char array, bitfields that
 * share a unit and one that starts a new one, a union, an enum member and
 * a pointer to another struct. struct_args_packed() gets gcc's packed
 * layouts: members at odd offsets, a bitfield that straddles its type's
 * units, a packed record inside an ordinary one, aligned(N) members.
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

struct __attribute__((packed)) wire {
	uint8_t kind;            /* 0 */
	uint32_t length;         /* 1 */
	uint64_t stamp;          /* 5 */
	uint16_t port;           /* 13 */
	unsigned int flags : 3;  /* bits 120-122 */
	unsigned int value : 30; /* bits 123-152: across three 4-byte units' bounds */
	struct inner at;         /* 20 */
	char tail;               /* 24; sizeof 25 */
};

struct holder {
	char c;                                 /* 0 */
	struct wire w;                          /* 1: a packed record is aligned to 1 */
	int after __attribute__((aligned(8)));  /* 32 */
	struct {
		char x;
		int y;
	} __attribute__((packed)) in;          /* 36, y at 37 */
	short s __attribute__((packed));        /* 41 */
};                                              /* sizeof 48 */

__attribute__((noinline)) int struct_args_packed(struct holder *h, int size)
{
	__asm__ volatile("" : : "r"(h), "r"(size) : "memory");
	return h->c + size;
}

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
	struct holder held = {
		.c = 'h',
		.w = { .kind = 7, .length = 0xdeadbeef, .stamp = 0x0102030405060708ULL, .port = 8080,
		       .flags = 5, .value = 0x2abcdef1, .at = { -2, 300 }, .tail = 'z' },
		.after = -42, .in = { 'q', 123456789 }, .s = -7,
	};
	int sum = 0;

	for (long i = 0; i < count; i++) {
		sum += struct_args_point(&first, GREEN);
		sum += struct_args_packed(&held, (int)sizeof(held));
	}
	return sum == 0;
}

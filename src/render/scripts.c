/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SVGs' scripts, included byte for byte with the assembler's .incbin
 * (paths are relative to the repository, where make runs) and ended with a
 * NUL so that C reads them as strings. The Makefile rebuilds this object
 * when a script changes.
 */
#include "scripts.h"

__asm__(".section .rodata\n"
	".global flamegraph_script\n"
	"flamegraph_script:\n"
	".incbin \"src/render/flamegraph.js\"\n"
	".byte 0\n"
	".global heatmap_script\n"
	"heatmap_script:\n"
	".incbin \"src/render/heatmap.js\"\n"
	".byte 0\n"
	".previous\n");

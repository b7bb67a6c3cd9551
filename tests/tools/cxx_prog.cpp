/* SPDX-License-Identifier: Apache-2.0 */
/*
 * C++ frames for the demangling tests (runtime/symbols.test).
 *
 *     cxx_prog [N [ROUNDS]]
 *
 * Each round makes N getppid system calls from a method of a class template
 * in a namespace, sonde_cxx::Engine<int>::leaf(int), called through
 * sonde_cxx::Engine<int>::run(int) and the overloaded free function
 * sonde_cxx::drive(int, double), so a user stack taken at sys_enter_getppid
 * holds mangled names (_ZN9sonde_cxx6EngineIiE4leafEi and so on) that must
 * print as written in the source. Rounds are 100 ms apart, so the process
 * lives on for a while after its first event.
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")
#include <cstdlib>
#include <sys/syscall.h>
#include <unistd.h>

namespace sonde_cxx {

/* called last by leaf(), which makes leaf() set up its own frame */
__attribute__((noipa)) void done()
{
	__asm__ volatile("");
}

/* the system call made inline, so that the first frame is leaf() and not
 * the C library's syscall() */
static inline long raw_getppid()
{
	long ret = SYS_getppid;
	__asm__ volatile("syscall" : "+a"(ret) : : "rcx", "r11", "memory");
	return ret;
}

template <typename T> class Engine {
public:
	__attribute__((noipa)) T leaf(int n)
	{
		long parent = 0;
		while (n-- > 0)
			parent = raw_getppid();
		done();
		return T(parent > 0);
	}

	__attribute__((noipa)) T run(int n)
	{
		T result = leaf(n);
		__asm__ volatile("");
		return result + 1;
	}
};

__attribute__((noipa)) int drive(int n, double scale)
{
	Engine<int> engine;
	int result = engine.run(n);
	__asm__ volatile("");
	return result + (int)scale;
}

} // namespace sonde_cxx

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 1;
	int rounds = argc > 2 ? std::atoi(argv[2]) : 1;
	int sum = 0;

	for (int round = 0; round < rounds; round++) {
		if (round)
			usleep(100000);
		sum += sonde_cxx::drive(n, 1.0);
	}
	return sum < 0;
}

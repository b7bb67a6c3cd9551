/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parser tests, three tables:
 *  - source -> AST dump (the format of ast_dump(): one node per line,
 *    children indented two spaces, labels such as `body:` for lists);
 *  - source -> the exact diagnostic, location, quoted line and caret;
 *  - source -> the location of every node, in tree order, for the nodes
 *    whose location later phases point their own errors at.
 * A few direct checks of diag.c's formatting follow, since the parser is
 * what exercises it most.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/util.h"
#include "compiler/ast.h"

struct parse_case {
	const char *name;
	const char *source;
	const char *expected;  /* AST dump, or diagnostics for error cases */
};

static const struct parse_case parse_ast_cases[] = {
	{ "empty_body",
	  "BEGIN { }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n" },
	{ "lowercase_begin_end",
	  "begin { exit(); } end { }",
	  "probe\n"
	  "  probe_spec begin\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call exit\n"
	  "probe\n"
	  "  probe_spec end\n"
	  "  body:\n" },
	{ "probe_list_newlines",
	  "kprobe:a,\n  kretprobe:vfs_* { }",
	  "probe\n"
	  "  probe_spec kprobe:a\n"
	  "  probe_spec kretprobe:vfs_*\n"
	  "  body:\n" },
	{ "tracepoint_wildcard",
	  "t:sched:* { @[probe] = count(); }",
	  "probe\n"
	  "  probe_spec t:sched:*\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @\n"
	  "        builtin probe\n"
	  "      call count\n" },
	{ "uprobe_path",
	  "uprobe:/bin/bash:readline { printf(\"%s\\n\", str(retval)); }",
	  "probe\n"
	  "  probe_spec uprobe:/bin/bash:readline\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call printf\n"
	  "        string \"%s\\n\"\n"
	  "        call str\n"
	  "          builtin retval\n" },
	{ "usdt_kfunc_rawtracepoint",
	  "usdt:/usr/lib/libc.so.6:libc:setjmp, kfunc:vmlinux:vfs_read, rawtracepoint:sched_switch { }",
	  "probe\n"
	  "  probe_spec usdt:/usr/lib/libc.so.6:libc:setjmp\n"
	  "  probe_spec kfunc:vmlinux:vfs_read\n"
	  "  probe_spec rawtracepoint:sched_switch\n"
	  "  body:\n" },
	{ "timed_probes",
	  "interval:s:1, profile:hz:99, software:cpu-clock:1000000 { }",
	  "probe\n"
	  "  probe_spec interval:s:1\n"
	  "  probe_spec profile:hz:99\n"
	  "  probe_spec software:cpu-clock:1000000\n"
	  "  body:\n" },
	{ "kprobe_offset",
	  "kprobe:do_sys_open+10 { }",
	  "probe\n"
	  "  probe_spec kprobe:do_sys_open+10\n"
	  "  body:\n" },
	{ "predicate",
	  "kprobe:f /pid == 42/ { }",
	  "probe\n"
	  "  probe_spec kprobe:f\n"
	  "  predicate:\n"
	  "    binary ==\n"
	  "      builtin pid\n"
	  "      int 42\n"
	  "  body:\n" },
	{ "predicate_glued",
	  "BEGIN/1/{ }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  predicate:\n"
	  "    int 1\n"
	  "  body:\n" },
	{ "predicate_with_division",
	  "kprobe:f / $1 / 2 > 1 / { }",
	  "probe\n"
	  "  probe_spec kprobe:f\n"
	  "  predicate:\n"
	  "    binary >\n"
	  "      binary /\n"
	  "        positional 1\n"
	  "        int 2\n"
	  "      int 1\n"
	  "  body:\n" },
	{ "preamble",
	  "#!/usr/bin/env bpftrace\n#include <linux/sched.h>\n// c\n/* b */ BEGIN { }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n" },
	{ "preamble_c_struct",
	  "#ifndef X\nstruct foo {\n  int a;\n};\n#endif\nBEGIN { }",
	  "c_record struct foo\n"
	  "  c_field int a\n"
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n" },
	{ "record",
	  "BEGIN { $r = (a = 1, b = \"x\"); }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $r\n"
	  "      tuple\n"
	  "        int 1\n"
	  "        string \"x\"\n"
	  "        names:\n"
	  "          string \"a\"\n"
	  "          string \"b\"\n" },
	{ "map_declarations",
	  "let @a = lruhash(100); let @b = hash(2 * 8) BEGIN { }",
	  "map_decl @a lruhash\n"
	  "  int 100\n"
	  "map_decl @b hash\n"
	  "  binary *\n"
	  "    int 2\n"
	  "    int 8\n"
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n" },
	{ "c_definitions_every_kind",
	  "struct p { const char *s, name[4]; unsigned int a : 3; struct p *next;\n"
	  "  union { int w; short h[2]; }; void (*fn)(int, char *); enum e { X } k; }\n"
	  "enum { A = 1 << 2, B, } typedef unsigned long word; struct fwd;\n"
	  "BEGIN { }",
	  "c_record struct p\n"
	  "  c_field char * s\n"
	  "  c_field char name\n"
	  "    int 4\n"
	  "  c_field unsigned int a\n"
	  "    int 3\n"
	  "  c_field struct p * next\n"
	  "  c_field union (anonymous)\n"
	  "    c_record union\n"
	  "      c_field int w\n"
	  "      c_field short h\n"
	  "        int 2\n"
	  "  c_field void * fn\n"
	  "  c_field enum e k\n"
	  "    c_enum enum e\n"
	  "      c_enumerator X\n"
	  "c_enum enum\n"
	  "  c_enumerator A\n"
	  "    binary <<\n"
	  "      int 1\n"
	  "      int 2\n"
	  "  c_enumerator B\n"
	  "c_typedef\n"
	  "  c_field unsigned long word\n"
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n" },
	{ "multiple_probes",
	  "BEGIN { @a = 1; } kprobe:f { @b = 2 } END { print(@a) }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @a\n"
	  "      int 1\n"
	  "probe\n"
	  "  probe_spec kprobe:f\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @b\n"
	  "      int 2\n"
	  "probe\n"
	  "  probe_spec END\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        map @a\n" },
	{ "integers",
	  "BEGIN { print(0, 1_000_000, 0x1F, 010, 1e3, 5ul, 0b101, 18446744073709551615) }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        int 0\n"
	  "        int 1000000\n"
	  "        int 31\n"
	  "        int 8\n"
	  "        int 1000\n"
	  "        int 5\n"
	  "        int 5\n"
	  "        int 18446744073709551615\n" },
	{ "true_false",
	  "BEGIN { $t = true; $f = false; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $t\n"
	  "      int 1\n"
	  "    assign =\n"
	  "      var $f\n"
	  "      int 0\n" },
	{ "string_escapes",
	  "BEGIN { printf(\"a\\tb\\x41\\101\\\"\\\\\\n\\0end\") }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call printf\n"
	  "        string \"a\\tbAA\\\"\\\\\\n\\x00end\"\n" },
	{ "scratch_and_positional",
	  "BEGIN { $x = $1 + $#; $y = $10; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      binary +\n"
	  "        positional 1\n"
	  "        positional_count\n"
	  "    assign =\n"
	  "      var $y\n"
	  "      positional 10\n" },
	{ "maps_without_keys",
	  "BEGIN { @ = 1; @m = 2; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @\n"
	  "      int 1\n"
	  "    assign =\n"
	  "      map @m\n"
	  "      int 2\n" },
	{ "map_keys",
	  "kprobe:f { @m[pid, comm] = count(); @n[1] = @m[2, \"x\"]; }",
	  "probe\n"
	  "  probe_spec kprobe:f\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @m\n"
	  "        builtin pid\n"
	  "        builtin comm\n"
	  "      call count\n"
	  "    assign =\n"
	  "      map @n\n"
	  "        int 1\n"
	  "      map @m\n"
	  "        int 2\n"
	  "        string \"x\"\n" },
	{ "map_tuple_key",
	  "BEGIN { @m[(1, 2)] = 3 }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @m\n"
	  "        tuple\n"
	  "          int 1\n"
	  "          int 2\n"
	  "      int 3\n" },
	{ "compound_assignments",
	  "BEGIN { $a += 1; $a -= 1; $a *= 1; $a /= 1; $a %= 1; $a &= 1; $a |= 1; $a ^= 1; $a <<= 1; @b >>= 1; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign +=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign -=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign *=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign /=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign %=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign &=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign |=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign ^=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign <<=\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign >>=\n"
	  "      map @b\n"
	  "      int 1\n" },
	{ "arithmetic_precedence",
	  "BEGIN { $x = 1 + 2 * 3 - 4 / 5 % 6; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      binary -\n"
	  "        binary +\n"
	  "          int 1\n"
	  "          binary *\n"
	  "            int 2\n"
	  "            int 3\n"
	  "        binary %\n"
	  "          binary /\n"
	  "            int 4\n"
	  "            int 5\n"
	  "          int 6\n" },
	{ "comparison_precedence",
	  "BEGIN { $x = 1 << 2 < 3 == 4 != 5 >= 6; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      binary !=\n"
	  "        binary ==\n"
	  "          binary <\n"
	  "            binary <<\n"
	  "              int 1\n"
	  "              int 2\n"
	  "            int 3\n"
	  "          int 4\n"
	  "        binary >=\n"
	  "          int 5\n"
	  "          int 6\n" },
	{ "logical_precedence",
	  "BEGIN { $x = a | b ^ c & d || e && f; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      binary ||\n"
	  "        binary |\n"
	  "          builtin a\n"
	  "          binary ^\n"
	  "            builtin b\n"
	  "            binary &\n"
	  "              builtin c\n"
	  "              builtin d\n"
	  "        binary &&\n"
	  "          builtin e\n"
	  "          builtin f\n" },
	{ "left_associative",
	  "BEGIN { $x = 1 - 2 - 3; $y = 8 / 4 / 2; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      binary -\n"
	  "        binary -\n"
	  "          int 1\n"
	  "          int 2\n"
	  "        int 3\n"
	  "    assign =\n"
	  "      var $y\n"
	  "      binary /\n"
	  "        binary /\n"
	  "          int 8\n"
	  "          int 4\n"
	  "        int 2\n" },
	{ "ternary_right_associative",
	  "BEGIN { $x = a ? b : c ? d : e; $y = a ? b ? 1 : 2 : 3; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      ternary\n"
	  "        builtin a\n"
	  "        builtin b\n"
	  "        ternary\n"
	  "          builtin c\n"
	  "          builtin d\n"
	  "          builtin e\n"
	  "    assign =\n"
	  "      var $y\n"
	  "      ternary\n"
	  "        builtin a\n"
	  "        ternary\n"
	  "          builtin b\n"
	  "          int 1\n"
	  "          int 2\n"
	  "        int 3\n" },
	{ "ternary_lowest",
	  "BEGIN { $x = a || b ? c + 1 : d; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      ternary\n"
	  "        binary ||\n"
	  "          builtin a\n"
	  "          builtin b\n"
	  "        binary +\n"
	  "          builtin c\n"
	  "          int 1\n"
	  "        builtin d\n" },
	{ "unary_operators",
	  "BEGIN { $x = -~!*&$y; $z = -1; $w = - -1 * 2; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      unary -\n"
	  "        unary ~\n"
	  "          unary !\n"
	  "            unary *\n"
	  "              unary &\n"
	  "                var $y\n"
	  "    assign =\n"
	  "      var $z\n"
	  "      unary -\n"
	  "        int 1\n"
	  "    assign =\n"
	  "      var $w\n"
	  "      binary *\n"
	  "        unary -\n"
	  "          unary -\n"
	  "            int 1\n"
	  "        int 2\n" },
	{ "increment_decrement",
	  "BEGIN { $x++; ++$x; @m[1]--; --@m; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      incdec postfix ++\n"
	  "        var $x\n"
	  "    expr_stmt\n"
	  "      incdec prefix ++\n"
	  "        var $x\n"
	  "    expr_stmt\n"
	  "      incdec postfix --\n"
	  "        map @m\n"
	  "          int 1\n"
	  "    expr_stmt\n"
	  "      incdec prefix --\n"
	  "        map @m\n" },
	{ "calls",
	  "BEGIN { printf(\"%d %s\\n\", pid, str(arg0, 8)); exit(); }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call printf\n"
	  "        string \"%d %s\\n\"\n"
	  "        builtin pid\n"
	  "        call str\n"
	  "          builtin arg0\n"
	  "          int 8\n"
	  "    expr_stmt\n"
	  "      call exit\n" },
	{ "fields",
	  "tracepoint:syscalls:sys_enter_openat { @[str(args->filename)] = count(); $a = args.flags; $b = $t->se.cfs_rq; }",
	  "probe\n"
	  "  probe_spec tracepoint:syscalls:sys_enter_openat\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @\n"
	  "        call str\n"
	  "          field ->filename\n"
	  "            builtin args\n"
	  "      call count\n"
	  "    assign =\n"
	  "      var $a\n"
	  "      field .flags\n"
	  "        builtin args\n"
	  "    assign =\n"
	  "      var $b\n"
	  "      field .cfs_rq\n"
	  "        field ->se\n"
	  "          var $t\n" },
	{ "tuple_index",
	  "BEGIN { $t = (1, \"a\", pid); print($t.1); print($t.0.1); }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $t\n"
	  "      tuple\n"
	  "        int 1\n"
	  "        string \"a\"\n"
	  "        builtin pid\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        tuple_index 1\n"
	  "          var $t\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        tuple_index 1\n"
	  "          tuple_index 0\n"
	  "            var $t\n" },
	{ "indexing",
	  "BEGIN { $x = $a[1]; @w = @m[1][2]; $y = $p[0]->f; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      index\n"
	  "        var $a\n"
	  "        int 1\n"
	  "    assign =\n"
	  "      map @w\n"
	  "      index\n"
	  "        map @m\n"
	  "          int 1\n"
	  "        int 2\n"
	  "    assign =\n"
	  "      var $y\n"
	  "      field ->f\n"
	  "        index\n"
	  "          var $p\n"
	  "          int 0\n" },
	{ "casts_integer",
	  "BEGIN { $a = (uint8)arg0; $b = (int64)-1; $c = (uint32 *)arg1; $d = (unsigned long)2; $e = (bool)1; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $a\n"
	  "      cast uint8\n"
	  "        builtin arg0\n"
	  "    assign =\n"
	  "      var $b\n"
	  "      cast int64\n"
	  "        unary -\n"
	  "          int 1\n"
	  "    assign =\n"
	  "      var $c\n"
	  "      cast uint32 *\n"
	  "        builtin arg1\n"
	  "    assign =\n"
	  "      var $d\n"
	  "      cast unsigned long\n"
	  "        int 2\n"
	  "    assign =\n"
	  "      var $e\n"
	  "      cast bool\n"
	  "        int 1\n" },
	{ "casts_record",
	  "BEGIN { $t = (struct task_struct *)curtask; $f = (struct foo)x; $u = (union u **)0; $e = (enum e)1; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $t\n"
	  "      cast struct task_struct *\n"
	  "        builtin curtask\n"
	  "    assign =\n"
	  "      var $f\n"
	  "      cast struct foo\n"
	  "        builtin x\n"
	  "    assign =\n"
	  "      var $u\n"
	  "      cast union u **\n"
	  "        int 0\n"
	  "    assign =\n"
	  "      var $e\n"
	  "      cast enum e\n"
	  "        int 1\n" },
	{ "cast_typedef",
	  "BEGIN { $p = (pid_t)arg0; $q = (u64 *)arg1; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $p\n"
	  "      cast pid_t\n"
	  "        builtin arg0\n"
	  "    assign =\n"
	  "      var $q\n"
	  "      cast u64 *\n"
	  "        builtin arg1\n" },
	{ "cast_binds_tighter_than_binary",
	  "BEGIN { $x = (uint8)arg0 + 1; $y = *(uint32*)arg0; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      binary +\n"
	  "        cast uint8\n"
	  "          builtin arg0\n"
	  "        int 1\n"
	  "    assign =\n"
	  "      var $y\n"
	  "      unary *\n"
	  "        cast uint32 *\n"
	  "          builtin arg0\n" },
	{ "parenthesised_not_cast",
	  "BEGIN { $a = (pid) - 1; $b = (pid); $c = (pid) * 2; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $a\n"
	  "      binary -\n"
	  "        builtin pid\n"
	  "        int 1\n"
	  "    assign =\n"
	  "      var $b\n"
	  "      builtin pid\n"
	  "    assign =\n"
	  "      var $c\n"
	  "      binary *\n"
	  "        builtin pid\n"
	  "        int 2\n" },
	{ "paren_and_tuples",
	  "BEGIN { $a = (1); $b = (1, 2); $c = ((1, 2), 3); $d = (((4))); }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $a\n"
	  "      int 1\n"
	  "    assign =\n"
	  "      var $b\n"
	  "      tuple\n"
	  "        int 1\n"
	  "        int 2\n"
	  "    assign =\n"
	  "      var $c\n"
	  "      tuple\n"
	  "        tuple\n"
	  "          int 1\n"
	  "          int 2\n"
	  "        int 3\n"
	  "    assign =\n"
	  "      var $d\n"
	  "      int 4\n" },
	{ "sizeof",
	  "BEGIN { $a = sizeof(struct task_struct); $b = sizeof(uint32); $c = sizeof($x); $d = sizeof(1 + 2); $e = sizeof(struct sock *); }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $a\n"
	  "      sizeof struct task_struct\n"
	  "    assign =\n"
	  "      var $b\n"
	  "      sizeof uint32\n"
	  "    assign =\n"
	  "      var $c\n"
	  "      sizeof\n"
	  "        var $x\n"
	  "    assign =\n"
	  "      var $d\n"
	  "      sizeof\n"
	  "        binary +\n"
	  "          int 1\n"
	  "          int 2\n"
	  "    assign =\n"
	  "      var $e\n"
	  "      sizeof struct sock *\n" },
	{ "offsetof",
	  "BEGIN { $a = offsetof(struct task_struct, pid); $b = offsetof(struct x, a.b.c); $c = offsetof(foo_t, f); }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $a\n"
	  "      offsetof struct task_struct, pid\n"
	  "    assign =\n"
	  "      var $b\n"
	  "      offsetof struct x, a.b.c\n"
	  "    assign =\n"
	  "      var $c\n"
	  "      offsetof foo_t, f\n" },
	{ "if_else_chain",
	  "BEGIN { if (@x == 1) { print(1) } else if (@x == 2) { print(2) } else { print(3) } }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    if\n"
	  "      binary ==\n"
	  "        map @x\n"
	  "        int 1\n"
	  "      then:\n"
	  "        expr_stmt\n"
	  "          call print\n"
	  "            int 1\n"
	  "      else:\n"
	  "        if\n"
	  "          binary ==\n"
	  "            map @x\n"
	  "            int 2\n"
	  "          then:\n"
	  "            expr_stmt\n"
	  "              call print\n"
	  "                int 2\n"
	  "          else:\n"
	  "            expr_stmt\n"
	  "              call print\n"
	  "                int 3\n" },
	{ "if_nested_no_else",
	  "BEGIN { if ($a) { if ($b) { $c = 1; } } }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    if\n"
	  "      var $a\n"
	  "      then:\n"
	  "        if\n"
	  "          var $b\n"
	  "          then:\n"
	  "            assign =\n"
	  "              var $c\n"
	  "              int 1\n" },
	{ "while_loop",
	  "BEGIN { $i = 0; while ($i < 10) { $i++; if ($i == 5) { break; } continue } }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $i\n"
	  "      int 0\n"
	  "    while\n"
	  "      binary <\n"
	  "        var $i\n"
	  "        int 10\n"
	  "      body:\n"
	  "        expr_stmt\n"
	  "          incdec postfix ++\n"
	  "            var $i\n"
	  "        if\n"
	  "          binary ==\n"
	  "            var $i\n"
	  "            int 5\n"
	  "          then:\n"
	  "            break\n"
	  "        continue\n" },
	{ "unroll",
	  "BEGIN { unroll(3) { @c++; } }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    unroll\n"
	  "      int 3\n"
	  "      body:\n"
	  "        expr_stmt\n"
	  "          incdec postfix ++\n"
	  "            map @c\n" },
	{ "for_map",
	  "END { for ($kv : @m) { print($kv.0); } }",
	  "probe\n"
	  "  probe_spec END\n"
	  "  body:\n"
	  "    for_map\n"
	  "      var $kv\n"
	  "      map @m\n"
	  "      body:\n"
	  "        expr_stmt\n"
	  "          call print\n"
	  "            tuple_index 0\n"
	  "              var $kv\n" },
	{ "for_range",
	  "BEGIN { for ($i : 0..$1) { print($i) } for ($j : $a..$b + 1) { } }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    for_range\n"
	  "      var $i\n"
	  "      int 0\n"
	  "      positional 1\n"
	  "      body:\n"
	  "        expr_stmt\n"
	  "          call print\n"
	  "            var $i\n"
	  "    for_range\n"
	  "      var $j\n"
	  "      var $a\n"
	  "      binary +\n"
	  "        var $b\n"
	  "        int 1\n"
	  "      body:\n" },
	{ "return",
	  "BEGIN { return; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    return\n" },
	{ "bare_block",
	  "BEGIN { { $q = 1 } $r = 2; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    block\n"
	  "      assign =\n"
	  "        var $q\n"
	  "        int 1\n"
	  "    assign =\n"
	  "      var $r\n"
	  "      int 2\n" },
	{ "let",
	  "BEGIN { let $a; let $b = 5; let $c: uint64 = 6; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign let =\n"
	  "      var $a\n"
	  "    assign let =\n"
	  "      var $b\n"
	  "      int 5\n"
	  "    assign let = : uint64\n"
	  "      var $c\n"
	  "      int 6\n" },
	{ "optional_semicolons",
	  "BEGIN { if (1) { } $x = 1; { } print(1) }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    if\n"
	  "      int 1\n"
	  "      then:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      int 1\n"
	  "    block\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        int 1\n" },
	{ "empty_statements",
	  "BEGIN { ; ; print(1);; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        int 1\n" },
	{ "builtins",
	  "BEGIN { print((pid, tid, uid, gid, comm, nsecs, elapsed, cpu, cgroup, curtask, rand, func, probe, args, cpid, retval, arg0, arg12, kstack, ustack, username, sarg0, numaid, jiffies, __builtin_x)) }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        tuple\n"
	  "          builtin pid\n"
	  "          builtin tid\n"
	  "          builtin uid\n"
	  "          builtin gid\n"
	  "          builtin comm\n"
	  "          builtin nsecs\n"
	  "          builtin elapsed\n"
	  "          builtin cpu\n"
	  "          builtin cgroup\n"
	  "          builtin curtask\n"
	  "          builtin rand\n"
	  "          builtin func\n"
	  "          builtin probe\n"
	  "          builtin args\n"
	  "          builtin cpid\n"
	  "          builtin retval\n"
	  "          builtin arg0\n"
	  "          builtin arg12\n"
	  "          builtin kstack\n"
	  "          builtin ustack\n"
	  "          builtin username\n"
	  "          builtin sarg0\n"
	  "          builtin numaid\n"
	  "          builtin jiffies\n"
	  "          builtin __builtin_x\n" },
	{ "stack_modes",
	  "kprobe:f { @[kstack(perf, 3), ustack(bpftrace)] = count(); }",
	  "probe\n"
	  "  probe_spec kprobe:f\n"
	  "  body:\n"
	  "    assign =\n"
	  "      map @\n"
	  "        call kstack\n"
	  "          builtin perf\n"
	  "          int 3\n"
	  "        call ustack\n"
	  "          builtin bpftrace\n"
	  "      call count\n" },
	{ "comments_everywhere",
	  "BEGIN // one\n/ 1 /* two */ / { /* three */ print(1); // four\n }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  predicate:\n"
	  "    int 1\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        int 1\n" },
	{ "crlf_line_endings",
	  "BEGIN {\r\n  print(1);\r\n}\r\n",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    expr_stmt\n"
	  "      call print\n"
	  "        int 1\n" },
	{ "field_named_like_keyword",
	  "BEGIN { $x = $s.if; }",
	  "probe\n"
	  "  probe_spec BEGIN\n"
	  "  body:\n"
	  "    assign =\n"
	  "      var $x\n"
	  "      field .if\n"
	  "        var $s\n" },
};

static const struct parse_case parse_error_cases[] = {
	{ "missing_semicolon",
	  "BEGIN { print(1) exit() }",
	  "stdin:1:18: error: expected ';' or '}' after statement, found identifier 'exit'\n"
	  "BEGIN { print(1) exit() }\n"
	  "                 ^~~~\n" },
	{ "stray_paren",
	  "BEGIN { print(1) ) }",
	  "stdin:1:18: error: expected ';' or '}' after statement, found ')'\n"
	  "BEGIN { print(1) ) }\n"
	  "                 ^\n" },
	{ "unterminated_string",
	  "BEGIN { print(\"abc); }",
	  "stdin:1:15: error: unterminated string\n"
	  "BEGIN { print(\"abc); }\n"
	  "              ^~~~~~~~\n" },
	{ "unexpected_character",
	  "BEGIN { # }",
	  "stdin:1:9: error: unexpected character '#'\n"
	  "BEGIN { # }\n"
	  "        ^\n" },
	{ "missing_brace_after_probe",
	  "BEGIN print(1)",
	  "stdin:1:7: error: expected '{' after probe list, found identifier 'print'\n"
	  "BEGIN print(1)\n"
	  "      ^~~~~\n" },
	{ "unterminated_comment",
	  "BEGIN { /* abc",
	  "stdin:1:9: error: unterminated comment\n"
	  "BEGIN { /* abc\n"
	  "        ^~\n" },
	{ "invalid_integer_octal",
	  "BEGIN { @x = 08 }",
	  "stdin:1:14: error: invalid integer literal\n"
	  "BEGIN { @x = 08 }\n"
	  "             ^~\n" },
	{ "invalid_integer_letters",
	  "BEGIN { @x = 12abc }",
	  "stdin:1:14: error: invalid integer literal\n"
	  "BEGIN { @x = 12abc }\n"
	  "             ^~~~~\n" },
	{ "integer_too_large",
	  "BEGIN { @x = 99999999999999999999; }",
	  "stdin:1:14: error: integer literal is too large\n"
	  "BEGIN { @x = 99999999999999999999; }\n"
	  "             ^~~~~~~~~~~~~~~~~~~~\n" },
	{ "invalid_escape",
	  "BEGIN { print(\"\\q\") }",
	  "stdin:1:16: error: invalid escape sequence '\\q'\n"
	  "BEGIN { print(\"\\q\") }\n"
	  "               ^~\n" },
	{ "missing_closing_brace",
	  "BEGIN {\n  print(1);\n",
	  "stdin:1:7: error: unterminated block: expected '}' before end of input\n"
	  "BEGIN {\n"
	  "      ^\n" },
	{ "stray_closing_brace",
	  "BEGIN { print(1); } }",
	  "stdin:1:21: error: expected a probe, found '}'\n"
	  "BEGIN { print(1); } }\n"
	  "                    ^\n" },
	{ "no_probes",
	  "",
	  "stdin: error: no probes in program\n" },
	{ "only_comments",
	  "// nothing here\n",
	  "stdin: error: no probes in program\n" },
	{ "assign_to_field",
	  "BEGIN { $x.a = 1 }",
	  "stdin:1:14: error: cannot assign to this expression: the left side of '=' must be a $variable or @map\n"
	  "BEGIN { $x.a = 1 }\n"
	  "             ^\n" },
	{ "assign_to_call",
	  "BEGIN { f() += 1; }",
	  "stdin:1:13: error: cannot assign to this expression: the left side of '+=' must be a $variable or @map\n"
	  "BEGIN { f() += 1; }\n"
	  "            ^~\n" },
	{ "if_without_condition",
	  "BEGIN { if { } }",
	  "stdin:1:12: error: expected a condition after 'if', found '{'\n"
	  "BEGIN { if { } }\n"
	  "           ^\n" },
	{ "while_without_condition",
	  "BEGIN { while { } }",
	  "stdin:1:15: error: expected a condition after 'while', found '{'\n"
	  "BEGIN { while { } }\n"
	  "              ^\n" },
	{ "if_without_block",
	  "BEGIN { if ($x) print(1); }",
	  "stdin:1:17: error: expected '{' after if condition, found identifier 'print'\n"
	  "BEGIN { if ($x) print(1); }\n"
	  "                ^~~~~\n" },
	{ "else_without_block",
	  "BEGIN { if (x) { } else print(1); }",
	  "stdin:1:25: error: expected '{' or 'if' after 'else', found identifier 'print'\n"
	  "BEGIN { if (x) { } else print(1); }\n"
	  "                        ^~~~~\n" },
	{ "for_over_integer",
	  "BEGIN { for ($x : 5) { } }",
	  "stdin:1:19: error: for loop needs a map without keys or a range 'start..end'\n"
	  "BEGIN { for ($x : 5) { } }\n"
	  "                  ^\n" },
	{ "for_over_map_with_key",
	  "BEGIN { for ($x : @m[1]) { } }",
	  "stdin:1:19: error: for loop needs a map without keys or a range 'start..end'\n"
	  "BEGIN { for ($x : @m[1]) { } }\n"
	  "                  ^~\n" },
	{ "for_without_variable",
	  "BEGIN { for (x : @m) { } }",
	  "stdin:1:14: error: expected a $variable after 'for (', found identifier 'x'\n"
	  "BEGIN { for (x : @m) { } }\n"
	  "             ^\n" },
	{ "ternary_missing_colon",
	  "BEGIN { $x = 1 ? 2; }",
	  "stdin:1:19: error: expected ':' in conditional expression, found ';'\n"
	  "BEGIN { $x = 1 ? 2; }\n"
	  "                  ^\n" },
	{ "empty_map_key",
	  "BEGIN { @x[] = 1 }",
	  "stdin:1:12: error: expected a map key, found ']'\n"
	  "BEGIN { @x[] = 1 }\n"
	  "           ^\n" },
	{ "tuple_missing_paren",
	  "BEGIN { $t = (1, 2 }",
	  "stdin:1:20: error: expected ')' or ',' in tuple, found '}'\n"
	  "BEGIN { $t = (1, 2 }\n"
	  "                   ^\n" },
	{ "call_missing_paren",
	  "BEGIN { print(1; }",
	  "stdin:1:16: error: expected ')' or ',' in function arguments, found ';'\n"
	  "BEGIN { print(1; }\n"
	  "               ^\n" },
	{ "trailing_comma_in_probe_list",
	  "BEGIN, { }",
	  "stdin:1:8: error: expected a probe after ',', found '{'\n"
	  "BEGIN, { }\n"
	  "       ^\n" },
	{ "lone_dollar",
	  "BEGIN { $ = 1 }",
	  "stdin:1:9: error: expected a variable name after '$'\n"
	  "BEGIN { $ = 1 }\n"
	  "        ^\n" },
	{ "bad_positional",
	  "BEGIN { $1x }",
	  "stdin:1:9: error: invalid positional parameter\n"
	  "BEGIN { $1x }\n"
	  "        ^~~\n" },
	{ "missing_expression",
	  "BEGIN { $x = ; }",
	  "stdin:1:14: error: expected an expression, found ';'\n"
	  "BEGIN { $x = ; }\n"
	  "             ^\n" },
	{ "error_on_later_line_with_tab",
	  "BEGIN {\n\t$x = 1;\n\t$y = ;\n}",
	  "stdin:3:7: error: expected an expression, found ';'\n"
	  "\t$y = ;\n"
	  "\t     ^\n" },
	{ "let_without_variable",
	  "BEGIN { let 5; }",
	  "stdin:1:13: error: expected a $variable after 'let', found integer '5'\n"
	  "BEGIN { let 5; }\n"
	  "            ^\n" },
	{ "predicate_not_closed",
	  "kprobe:f /pid { }",
	  "stdin:1:15: error: expected '/' to end the predicate, found '{'\n"
	  "kprobe:f /pid { }\n"
	  "              ^\n" },
	{ "invalid_tuple_index",
	  "BEGIN { $t.01 }",
	  "stdin:1:12: error: invalid tuple index\n"
	  "BEGIN { $t.01 }\n"
	  "           ^~\n" },
	{ "arrow_without_field",
	  "BEGIN { args->1 }",
	  "stdin:1:15: error: expected a field name after '->', found integer '1'\n"
	  "BEGIN { args->1 }\n"
	  "              ^\n" },
	{ "control_character",
	  "BEGIN { \x01"" }",
	  "stdin:1:9: error: unexpected character '\\x01'\n"
	  "BEGIN { \x01"" }\n"
	  "        ^\n" },
	{ "struct_without_name",
	  "BEGIN { $x = (struct)1; }",
	  "stdin:1:21: error: expected a type name after 'struct', 'union' or 'enum', found ')'\n"
	  "BEGIN { $x = (struct)1; }\n"
	  "                    ^\n" },
	{ "cast_missing_paren",
	  "BEGIN { $x = (struct foo *1; }",
	  "stdin:1:27: error: expected ')' after type name in cast, found integer '1'\n"
	  "BEGIN { $x = (struct foo *1; }\n"
	  "                          ^\n" },
	{ "unroll_missing_count_paren",
	  "BEGIN { unroll 5 { } }",
	  "stdin:1:16: error: expected '(' after 'unroll', found integer '5'\n"
	  "BEGIN { unroll 5 { } }\n"
	  "               ^\n" },
	{ "assign_to_literal",
	  "BEGIN { 1 = 2; }",
	  "stdin:1:11: error: cannot assign to this expression: the left side of '=' must be a $variable or @map\n"
	  "BEGIN { 1 = 2; }\n"
	  "          ^\n" },
	{ "statement_cut_off_by_end_of_input",
	  "BEGIN { printf(\"x\\n\") ",
	  "stdin:1:23: error: expected ';' or '}' after statement, found end of input\n"
	  "BEGIN { printf(\"x\\n\") \n"
	  "                      ^\n" },
	{ "second_probe_error",
	  "BEGIN { }\nkprobe:f { @x = }",
	  "stdin:2:17: error: expected an expression, found '}'\n"
	  "kprobe:f { @x = }\n"
	  "                ^\n" },
	{ "unclosed_inner_block",
	  "BEGIN {\n  if (1) {\n    print(1);\n}\n",
	  "stdin:1:7: error: unterminated block: expected '}' before end of input\n"
	  "BEGIN {\n"
	  "      ^\n" },
	{ "string_spans_lines",
	  "BEGIN { printf(\"a\n\"); }",
	  "stdin:1:16: error: unterminated string\n"
	  "BEGIN { printf(\"a\n"
	  "               ^~\n" },
	{ "empty_parens",
	  "BEGIN { $x = (); }",
	  "stdin:1:15: error: expected an expression, found ')'\n"
	  "BEGIN { $x = (); }\n"
	  "              ^\n" },
	{ "assignment_in_predicate",
	  "kprobe:f /$x = 1/ { }",
	  "stdin:1:14: error: expected '/' to end the predicate, found '='\n"
	  "kprobe:f /$x = 1/ { }\n"
	  "             ^\n" },
};

/* Parses source; hands back the AST dump (on success) and the diagnostics. */
static int parse_test_run(const char *source, char **dump, char **diagnostics,
			  void (*printer)(const struct ast *, FILE *))
{
	struct source src = { .filename = "stdin", .text = source };
	struct diag diag;
	struct ast ast;
	size_t dump_size, diag_size;
	FILE *dump_out = open_memstream(dump, &dump_size);
	FILE *diag_out = open_memstream(diagnostics, &diag_size);
	int rc;

	diag_init(&diag, &src, diag_out);
	rc = parse_program(&src, &ast, &diag);
	if (rc == 0)
		printer(&ast, dump_out);
	if (rc != 0 && diag.error_count == 0)
		fprintf(diag_out, "<parse failed without an error>\n");
	if (rc == 0 && diag.error_count != 0)
		fprintf(diag_out, "<parse succeeded after an error>\n");
	ast_free(&ast);
	fclose(dump_out);
	fclose(diag_out);
	return rc;
}

static int passed, failed;

static void parse_test_report(const char *name, const char *expected, const char *got)
{
	if (strcmp(expected, got) == 0) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s:\n--- expected\n%s--- got\n%s---\n", name, expected, got);
		failed++;
	}
}

static void parse_test_ast_cases(void)
{
	size_t i;

	for (i = 0; i < sizeof(parse_ast_cases) / sizeof(parse_ast_cases[0]); i++) {
		const struct parse_case *c = &parse_ast_cases[i];
		char *dump, *diagnostics;

		parse_test_run(c->source, &dump, &diagnostics, ast_dump);
		if (diagnostics[0]) {
			printf("FAIL %s: unexpected diagnostics:\n%s", c->name, diagnostics);
			failed++;
		} else {
			parse_test_report(c->name, c->expected, dump);
		}
		free(dump);
		free(diagnostics);
	}
}

static void parse_test_error_cases(void)
{
	size_t i;

	for (i = 0; i < sizeof(parse_error_cases) / sizeof(parse_error_cases[0]); i++) {
		const struct parse_case *c = &parse_error_cases[i];
		char *dump, *diagnostics;
		int rc = parse_test_run(c->source, &dump, &diagnostics, ast_dump);

		if (rc == 0) {
			printf("FAIL %s: parsed without error:\n%s", c->name, dump);
			failed++;
		} else {
			parse_test_report(c->name, c->expected, diagnostics);
		}
		free(dump);
		free(diagnostics);
	}
}

/* ---- node locations ---- */

static void parse_test_print_locations(const struct node *node, FILE *out, int depth)
{
	const struct node *children[6];
	int i;

	for (; node; node = node->next) {
		fprintf(out, "%*s%s %d:%d+%d\n", depth * 2, "", node_kind_name(node->kind),
			node->loc.line, node->loc.column, node->loc.length);
		children[0] = node->predicate;
		children[1] = node->cond;
		children[2] = node->lhs;
		children[3] = node->rhs;
		children[4] = node->args;
		children[5] = node->then;
		for (i = 0; i < 6; i++)
			parse_test_print_locations(children[i], out, depth + 1);
		parse_test_print_locations(node->els, out, depth + 1);
		parse_test_print_locations(node->body, out, depth + 1);
	}
}

static void parse_test_locations_printer(const struct ast *ast, FILE *out)
{
	parse_test_print_locations(ast->probes, out, 0);
}

static const struct parse_case parse_location_cases[] = {
	{ "locations_expressions",
	  "BEGIN { $x = a + (uint8)b; }",
	  "probe 1:1+5\n"
	  "  probe_spec 1:1+5\n"
	  "  assign 1:12+1\n"
	  "    var 1:9+2\n"
	  "    binary 1:16+1\n"
	  "      builtin 1:14+1\n"
	  "      cast 1:18+7\n"
	  "        builtin 1:25+1\n" },
	{ "locations_probe",
	  "kprobe:vfs_read,\n  kretprobe:vfs_write /pid/ {\n  @[comm] = count();\n  printf(\"%s\", args->x.y);\n}",
	  "probe 1:1+15\n"
	  "  builtin 2:24+3\n"
	  "  probe_spec 1:1+15\n"
	  "  probe_spec 2:3+19\n"
	  "  assign 3:11+1\n"
	  "    map 3:3+1\n"
	  "      builtin 3:5+4\n"
	  "    call 3:13+5\n"
	  "  expr_stmt 4:3+6\n"
	  "    call 4:3+6\n"
	  "      string 4:10+4\n"
	  "      field 4:24+1\n"
	  "        field 4:22+1\n"
	  "          builtin 4:16+4\n" },
	{ "locations_statements",
	  "BEGIN {\n  if ($a) { $b++ } else { return }\n  for ($i : 0..3) { }\n  let $c;\n}",
	  "probe 1:1+5\n"
	  "  probe_spec 1:1+5\n"
	  "  if 2:3+2\n"
	  "    var 2:7+2\n"
	  "    expr_stmt 2:15+2\n"
	  "      incdec 2:15+2\n"
	  "        var 2:13+2\n"
	  "    return 2:27+6\n"
	  "  for_range 3:3+3\n"
	  "    int 3:13+1\n"
	  "    var 3:8+2\n"
	  "    int 3:16+1\n"
	  "  assign 4:7+2\n"
	  "    var 4:7+2\n" },
};

static void parse_test_location_cases(void)
{
	size_t i;

	for (i = 0; i < sizeof(parse_location_cases) / sizeof(parse_location_cases[0]); i++) {
		const struct parse_case *c = &parse_location_cases[i];
		char *dump, *diagnostics;

		parse_test_run(c->source, &dump, &diagnostics, parse_test_locations_printer);
		parse_test_report(c->name, c->expected, diagnostics[0] ? diagnostics : dump);
		free(dump);
		free(diagnostics);
	}
}

/* ---- nesting limits ---- */

static char *parse_test_nested_source(int depth)
{
	struct strbuf sb;
	int i;

	strbuf_init(&sb);
	strbuf_puts(&sb, "BEGIN { $x = ");
	for (i = 0; i < depth; i++)
		strbuf_putc(&sb, '(');
	strbuf_putc(&sb, '1');
	for (i = 0; i < depth; i++)
		strbuf_putc(&sb, ')');
	strbuf_puts(&sb, "; }");
	return strbuf_release(&sb);
}

static void parse_test_nesting(void)
{
	static const char *const hostile[] = { "(", "-", "!", "{", "if (1) {", "1 + ", "@x[",
					       "f(", "1 ? 1 : " };
	char *source = parse_test_nested_source(100);
	char *dump, *diagnostics;
	size_t i;

	parse_test_run(source, &dump, &diagnostics, ast_dump);
	if (diagnostics[0] || !strstr(dump, "int 1")) {
		printf("FAIL nesting_100_is_fine: %s\n", diagnostics);
		failed++;
	} else {
		printf("PASS nesting_100_is_fine\n");
		passed++;
	}
	free(source);
	free(dump);
	free(diagnostics);

	/* Each construct repeated far past the limit must fail cleanly. */
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		struct strbuf sb;
		int k;

		strbuf_init(&sb);
		strbuf_puts(&sb, "BEGIN { ");
		for (k = 0; k < 20000; k++)
			strbuf_puts(&sb, hostile[i]);
		strbuf_puts(&sb, "1");
		source = strbuf_release(&sb);
		parse_test_run(source, &dump, &diagnostics, ast_dump);
		if (!strstr(diagnostics, "error: program is nested too deeply (more than 512 levels)")) {
			printf("FAIL nesting_limit_%zu '%s': %.200s\n", i, hostile[i], diagnostics);
			failed++;
		} else {
			printf("PASS nesting_limit_%zu\n", i);
			passed++;
		}
		free(source);
		free(dump);
		free(diagnostics);
	}
}

/* ---- diag.c formatting ---- */

static void parse_test_diag(void)
{
	struct source src = { .filename = "prog.bt", .text = "BEGIN {\n\tfoo(1);\n}" };
	struct diag diag;
	char *text;
	size_t size;
	FILE *out = open_memstream(&text, &size);
	struct src_loc call = { 2, 2, 3 };
	struct src_loc past_end = { 2, 6, 50 };
	struct src_loc no_line = { 9, 1, 1 };

	diag_init(&diag, &src, out);
	diag_warning(&diag, call, "unused result of %s()", "foo");
	diag_error(&diag, past_end, "underline is cut at the end of the line");
	diag_error(&diag, no_line, "line beyond the text");
	diag_error_noloc(&diag, "no probes in program");
	fclose(out);
	parse_test_report("diag_formats",
			  "prog.bt:2:2: warning: unused result of foo()\n"
			  "\tfoo(1);\n"
			  "\t^~~\n"
			  "prog.bt:2:6: error: underline is cut at the end of the line\n"
			  "\tfoo(1);\n"
			  "\t    ^~~\n"
			  "prog.bt:9:1: error: line beyond the text\n"
			  "prog.bt: error: no probes in program\n",
			  text);
	free(text);
	if (diag.error_count == 3) {
		printf("PASS diag_error_count\n");
		passed++;
	} else {
		printf("FAIL diag_error_count: %d, expected 3 (warnings do not count)\n",
		       diag.error_count);
		failed++;
	}
}

int main(void)
{
	parse_test_ast_cases();
	parse_test_error_cases();
	parse_test_location_cases();
	parse_test_nesting();
	parse_test_diag();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The render subcommands, run from main.c's table: `sonde flamegraph` and
 * `sonde heatmap`. argv[0] is the subcommand's name; the return value is
 * the exit status.
 */
#ifndef SONDE_RENDER_COMMANDS_H
#define SONDE_RENDER_COMMANDS_H

int flamegraph_command(int argc, char **argv);
int heatmap_command(int argc, char **argv);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The scripts embedded in the SVGs sonde draws. They are kept as JavaScript
 * files beside this header (flamegraph.js, heatmap.js) so that they can be
 * read and edited as what they are; scripts.c pulls them in whole.
 */
#ifndef SONDE_SCRIPTS_H
#define SONDE_SCRIPTS_H

extern const char flamegraph_script[];
extern const char heatmap_script[];

#endif

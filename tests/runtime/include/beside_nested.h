/* included by beside.h, found beside it */
#define BESIDE_DEPTH 3

/* found beside the script that includes it (include-quoted-beside-script) */
#define BESIDE_WIDTH 7
#include "beside_nested.h"

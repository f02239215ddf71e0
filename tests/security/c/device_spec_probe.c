/* The C runtime's selection rules on one case, for test_sec_device_spec.py:
 *
 *   device_spec_probe pick SPEC NAME...   prints the index SPEC picks, or -1
 *   device_spec_probe rank                prints the local rank from the
 *                                         environment (-1: none), or
 *                                         "error: MESSAGE"
 *
 * It includes the runtime's source to reach its static functions. */
#include "f2loopy_runtime.c"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "pick") == 0) {
        static char names[64][256];
        long n = 0;
        for (int i = 3; i < argc && n < 64; i++, n++)
            snprintf(names[n], sizeof names[n], "%s", argv[i]);
        printf("%ld\n", pick(argv[2], names, n));
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "rank") == 0) {
        int rank = -1;
        char from[64] = "";
        if (env_local_rank(&rank, from, sizeof from) != F2L_OK)
            printf("error: %s\n", f2l_error_message());
        else
            printf("%d\n", rank);
        return 0;
    }
    return 2;
}

/* render/web.c: look-up of the embedded page assets by file name. */
#include "render/web.h"
#include <string.h>

const char *gp_web(const char *name)
{
    if (!name) return NULL;
    for (const gp_web_asset *a = gp_web_assets; a->name; a++)
        if (!strcmp(a->name, name)) return a->text;
    return NULL;
}

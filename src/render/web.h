/* render/web.h: the page scripts and styles (the .js and .css files of
 * src/render/web/), embedded into the library at build time by cmake/web_embed.cmake, so that
 * they are real files that can be linted while pages stay self-contained.
 * Adding a file under src/render/web/ is all it takes to make it available
 * by name. */
#ifndef GP_RENDER_WEB_H
#define GP_RENDER_WEB_H
#include <stddef.h>

typedef struct gp_web_asset {
    const char *name; /* file name, e.g. "report.js"; NULL ends the table */
    const char *text; /* the file's bytes, NUL-terminated */
    size_t len;       /* their number, without the NUL */
} gp_web_asset;

/* The generated table, in file-name order, ended by a NULL name. */
extern const gp_web_asset gp_web_assets[];

/* The text of the embedded file `name` ("common.js"), or NULL when there is
 * no such file. */
const char *gp_web(const char *name);

#endif

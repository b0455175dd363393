/* SPDX-License-Identifier: Apache-2.0 */
/* track-svg.c: the track producer's SVG writer (track_svg_write()): a grid
 * of tracks drawn as kerbs, asphalt and a dashed centerline. */
#include "track-producer.h"

#define SVG_CELL 280.0 /* px per track, square */
#define SVG_PAD 16.0
#define SVG_LABEL 20.0
#define SVG_TITLE 34.0

/* Locale-independent numbers: SVG wants a '.' whatever LC_NUMERIC says. */
static void
append_num (GString *s, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  g_string_append (s, g_ascii_formatd (buf, sizeof buf, "%.1f", v));
}

static void
append_attr (GString *s, const char *name, double v)
{
  g_string_append_printf (s, " %s=\"", name);
  append_num (s, v);
  g_string_append_c (s, '"');
}

/* One track in the cell at (@x0, @y0): kerbs, asphalt, dashed centerline,
 * start point and label. */
static void
append_track (GString *s, const float2 *p, guint n, gboolean valid, float width,
              const char *label, double x0, double y0)
{
  static const struct
  {
    const char *stroke;
    double extra; /* px added to the scaled width; < 0: a fixed line width */
    const char *dash;
  } strokes[] = {
    { "#c0392b", 4.0, NULL },   /* kerbs */
    { "#5d6063", 0.0, NULL },   /* asphalt */
    { "#ffffff", -1.2, "6 5" }, /* centerline */
  };
  double min_x = p[0].x, max_x = p[0].x, min_y = p[0].y, max_y = p[0].y;
  double side = SVG_CELL - 2 * SVG_PAD, avail = side - SVG_LABEL, scale, ext, ox, oy;
  g_autofree char *text = g_markup_escape_text (label, -1);
  g_autoptr (GString) d = g_string_new ("M");

  for (guint i = 1; i < n; i++)
    {
      min_x = MIN (min_x, p[i].x);
      max_x = MAX (max_x, p[i].x);
      min_y = MIN (min_y, p[i].y);
      max_y = MAX (max_y, p[i].y);
    }
  ext = MAX (max_x - min_x, max_y - min_y) + width;
  scale = ext > 0 ? avail / ext : 1.0;
  /* Centre the track below the label; SVG's y axis points down. */
  ox = x0 + SVG_PAD + (side - scale * (max_x - min_x)) / 2 - scale * min_x;
  oy = y0 + SVG_PAD + SVG_LABEL + (avail - scale * (max_y - min_y)) / 2 + scale * max_y;
  for (guint i = 0; i < n; i++)
    {
      g_string_append_c (d, i == 0 ? ' ' : 'L');
      append_num (d, ox + scale * p[i].x);
      g_string_append_c (d, ' ');
      append_num (d, oy - scale * p[i].y);
    }
  g_string_append (d, " Z");

  for (guint k = 0; k < G_N_ELEMENTS (strokes); k++)
    {
      double w
          = strokes[k].extra < 0 ? -strokes[k].extra : scale * width + strokes[k].extra;

      g_string_append_printf (s,
                              "<path d=\"%s\" fill=\"none\" stroke=\"%s\" "
                              "stroke-linejoin=\"round\"",
                              d->str, strokes[k].stroke);
      append_attr (s, "stroke-width", w);
      if (strokes[k].dash != NULL)
        g_string_append_printf (s, " stroke-dasharray=\"%s\"", strokes[k].dash);
      g_string_append (s, "/>\n");
    }
  g_string_append (s, "<circle r=\"4\" fill=\"#2e86de\" stroke=\"#fff\"");
  append_attr (s, "cx", ox + scale * p[0].x);
  append_attr (s, "cy", oy - scale * p[0].y);
  g_string_append (s, "/>\n<text font-family=\"sans-serif\" font-size=\"13\"");
  append_attr (s, "x", x0 + SVG_PAD);
  append_attr (s, "y", y0 + SVG_PAD + 10);
  g_string_append_printf (s, " fill=\"%s\">%s%s</text>\n", valid ? "#222" : "#c0392b",
                          text, valid ? "" : " (invalid)");
}

gboolean
track_svg_write (const char *path, const float2 *points, const guint8 *valid,
                 guint n_tracks, guint n_points, float width, const char *const *labels,
                 GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);
  gboolean have_labels = labels != NULL;
  guint cols = 1, rows;
  double w, h;

  g_return_val_if_fail (path != NULL && points != NULL && valid != NULL, FALSE);
  g_return_val_if_fail (n_tracks > 0 && n_points >= 3, FALSE);
  while (cols * cols < n_tracks)
    cols++;
  rows = (n_tracks + cols - 1) / cols;
  w = cols * SVG_CELL;
  h = rows * SVG_CELL + SVG_TITLE;

  g_string_append (s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\"");
  append_attr (s, "width", w);
  append_attr (s, "height", h);
  g_string_append (s, " viewBox=\"0 0 ");
  append_num (s, w);
  g_string_append_c (s, ' ');
  append_num (s, h);
  g_string_append (s,
                   "\">\n<rect width=\"100%\" height=\"100%\" fill=\"#f4f1ea\"/>\n"
                   "<text font-family=\"sans-serif\" font-size=\"17\" fill=\"#222\"");
  append_attr (s, "x", SVG_PAD);
  append_attr (s, "y", 23);
  g_string_append_printf (s, ">TrackGen: %u tracks of %u points, drawn ", n_tracks,
                          n_points);
  append_num (s, width);
  g_string_append (s, " m wide (dot: start)</text>\n");
  for (guint i = 0; i < n_tracks; i++)
    {
      double x0 = (i % cols) * SVG_CELL, y0 = SVG_TITLE + (i / cols) * SVG_CELL;
      g_autofree char *fallback = g_strdup_printf ("track %u", i);
      const char *label = fallback;

      if (have_labels && labels[i] != NULL)
        label = labels[i];
      else
        have_labels = FALSE; /* a NULL-terminated list may be shorter */
      g_string_append (s, "<rect rx=\"10\" fill=\"#dde8cf\"");
      append_attr (s, "x", x0 + 4);
      append_attr (s, "y", y0 + 4);
      append_attr (s, "width", SVG_CELL - 8);
      append_attr (s, "height", SVG_CELL - 8);
      g_string_append (s, "/>\n");
      append_track (s, points + (gsize)i * n_points, n_points, valid[i] != 0, width,
                    label, x0, y0);
    }
  g_string_append (s, "</svg>\n");
  return g_file_set_contents (path, s->str, s->len, error);
}

//! The tray icon's pixels: the base art, the unread count drawn into it with a tiny embedded
//! 5×7 bitmap font (no system font), grey when Fabric is down or no host is wired, an amber
//! warning triangle (top right) when a hook logged a failure in the last hour, and the "needs
//! you" mark (bottom right: a red disc in a white ring, the count moved aside) while a session
//! waits for the person. Both marks are drawn after the grey, so they keep their colour; the
//! disc is a quarter of the icon across, three pixels and more at 16 px.
//!
//! Everything is drawn in code (signed-distance shapes, so any size is crisp), which is also
//! how the PNGs in `icons/` are made (`fabric-tray --render-icons <dir>`).

use crate::model::IconState;

/// The tray icon's size in pixels (trays scale it to their height).
pub const TRAY_SIZE: u32 = 64;

const BLUE: [u8; 3] = [0x2f, 0x6f, 0xeb];
const WHITE: [u8; 3] = [0xff, 0xff, 0xff];
const AMBER: [u8; 3] = [0xff, 0xb0, 0x00];
const DARK: [u8; 3] = [0x20, 0x20, 0x20];
/// The "needs you" mark.
const RED: [u8; 3] = [0xe0, 0x1e, 0x37];

/// 5×7 glyphs, one row per byte, the 5 low bits left to right.
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e],
        '1' => [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e],
        '2' => [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f],
        '3' => [0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e],
        '4' => [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02],
        '5' => [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e],
        '6' => [0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e],
        '7' => [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e],
        '9' => [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c],
        '+' => [0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00],
        '!' => [0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04],
        _ => [0; 7],
    }
}

/// An RGBA image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgba {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

impl Rgba {
    fn new(size: u32) -> Self {
        Rgba {
            width: size,
            height: size,
            pixels: vec![0; (size * size * 4) as usize],
        }
    }

    /// The pixel at (x, y).
    pub fn get(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [
            self.pixels[i],
            self.pixels[i + 1],
            self.pixels[i + 2],
            self.pixels[i + 3],
        ]
    }

    /// Blends `color` over (x, y) with `coverage` (0–1).
    fn blend(&mut self, x: u32, y: u32, color: [u8; 3], coverage: f32) {
        if coverage <= 0.0 || x >= self.width || y >= self.height {
            return;
        }
        let a = coverage.min(1.0);
        let i = ((y * self.width + x) * 4) as usize;
        let dst_a = self.pixels[i + 3] as f32 / 255.0;
        let out_a = a + dst_a * (1.0 - a);
        for (c, &channel) in color.iter().enumerate() {
            let dst = self.pixels[i + c] as f32 / 255.0;
            let src = channel as f32 / 255.0;
            let out = if out_a > 0.0 {
                (src * a + dst * dst_a * (1.0 - a)) / out_a
            } else {
                0.0
            };
            self.pixels[i + c] = (out * 255.0).round() as u8;
        }
        self.pixels[i + 3] = (out_a * 255.0).round() as u8;
    }

    /// Fills a shape given by a signed distance function (in pixels, negative inside).
    fn fill(&mut self, color: [u8; 3], sdf: impl Fn(f32, f32) -> f32) {
        for y in 0..self.height {
            for x in 0..self.width {
                let d = sdf(x as f32 + 0.5, y as f32 + 0.5);
                self.blend(x, y, color, (0.5 - d).clamp(0.0, 1.0));
            }
        }
    }
}

/// Signed distance to a rounded rectangle.
fn rounded_rect(x: f32, y: f32, x0: f32, y0: f32, x1: f32, y1: f32, r: f32) -> f32 {
    let cx = (x0 + x1) / 2.0;
    let cy = (y0 + y1) / 2.0;
    let hx = (x1 - x0) / 2.0 - r;
    let hy = (y1 - y0) / 2.0 - r;
    let qx = (x - cx).abs() - hx;
    let qy = (y - cy).abs() - hy;
    let outside = (qx.max(0.0).powi(2) + qy.max(0.0).powi(2)).sqrt();
    outside + qx.max(qy).min(0.0) - r
}

/// Signed distance to a triangle pointing up, with its apex at (cx, top) and base at `bottom`.
fn triangle(x: f32, y: f32, cx: f32, top: f32, bottom: f32, half_base: f32) -> f32 {
    let h = bottom - top;
    // Distance to the two slanted edges and the base, max of half-planes (a good-enough SDF).
    let len = (h * h + half_base * half_base).sqrt();
    let left = ((cx - x) * h - (y - top) * half_base) / len;
    let right = ((x - cx) * h - (y - top) * half_base) / len;
    let base = y - bottom;
    left.max(right).max(base)
}

/// Draws `text` centred at (cx, cy) with pixel `scale` per font dot (4×4 supersampled, so
/// fractional scales and positions stay seamless).
fn draw_text(img: &mut Rgba, text: &str, cx: f32, cy: f32, scale: f32, color: [u8; 3]) {
    let glyphs: Vec<[u8; 7]> = text.chars().map(glyph).collect();
    let n = glyphs.len() as f32;
    let width = n * 6.0 * scale - scale;
    let x0 = cx - width / 2.0;
    let y0 = cy - 3.5 * scale;
    let lit = |x: f32, y: f32| -> bool {
        let fx = (x - x0) / scale;
        let fy = (y - y0) / scale;
        if fx < 0.0 || !(0.0..7.0).contains(&fy) {
            return false;
        }
        let (cell, col) = ((fx / 6.0) as usize, (fx % 6.0) as u32);
        let row = fy as usize;
        col < 5
            && glyphs
                .get(cell)
                .is_some_and(|g| g[row] & (0x10 >> col) != 0)
    };
    let (xa, xb) = (
        (x0.floor().max(0.0)) as u32,
        ((x0 + width).ceil() as u32).min(img.width),
    );
    let (ya, yb) = (
        (y0.floor().max(0.0)) as u32,
        ((y0 + 7.0 * scale).ceil() as u32).min(img.height),
    );
    for y in ya..yb {
        for x in xa..xb {
            let mut hits = 0;
            for sy in 0..4 {
                for sx in 0..4 {
                    let px = x as f32 + (sx as f32 + 0.5) / 4.0;
                    let py = y as f32 + (sy as f32 + 0.5) / 4.0;
                    if lit(px, py) {
                        hits += 1;
                    }
                }
            }
            img.blend(x, y, color, hits as f32 / 16.0);
        }
    }
}

/// The icon for `state` at `size` pixels square.
pub fn render(state: &IconState, size: u32) -> Rgba {
    let mut img = Rgba::new(size);
    let s = size as f32 / 64.0;
    // The base: a blue rounded square.
    img.fill(BLUE, |x, y| {
        rounded_rect(x, y, 2.0 * s, 2.0 * s, 62.0 * s, 62.0 * s, 13.0 * s)
    });
    if state.count_text.is_empty() {
        // The board: three lines of a list, the first with a dot.
        for (i, width) in [(0, 30.0), (1, 36.0), (2, 24.0)] {
            let y = (18.0 + i as f32 * 12.0) * s;
            img.fill(WHITE, |x, yy| {
                rounded_rect(x, yy, 14.0 * s, y, (14.0 + width) * s, y + 6.0 * s, 3.0 * s)
            });
        }
        img.fill(WHITE, |x, y| {
            ((x - 48.0 * s).powi(2) + (y - 21.0 * s).powi(2)).sqrt() - 4.0 * s
        });
    } else {
        let scale = match state.count_text.chars().count() {
            1 => 6.0,
            2 => 4.5,
            _ => 3.0,
        } * s;
        // With the mark, the count moves up and left, clear of it.
        let (cx, cy) = if state.needs_you {
            (27.0, 28.0)
        } else {
            (32.0, 33.0)
        };
        draw_text(&mut img, &state.count_text, cx * s, cy * s, scale, WHITE);
    }
    if state.greyed {
        grey_out(&mut img);
    }
    if state.warning {
        // An amber triangle with a dark outline and a dark "!" in the top-right corner.
        let (cx, top, bottom, half) = (49.0 * s, 3.0 * s, 27.0 * s, 13.0 * s);
        img.fill(DARK, |x, y| triangle(x, y, cx, top, bottom, half) - 1.5 * s);
        img.fill(AMBER, |x, y| triangle(x, y, cx, top, bottom, half));
        draw_text(&mut img, "!", cx, 18.0 * s, 2.0 * s, DARK);
    }
    if state.needs_you {
        let (cx, cy) = (NEEDS_YOU_CENTRE * s, NEEDS_YOU_CENTRE * s);
        let disc = move |x: f32, y: f32| ((x - cx).powi(2) + (y - cy).powi(2)).sqrt();
        img.fill(WHITE, |x, y| disc(x, y) - (NEEDS_YOU_RADIUS + 3.0) * s);
        img.fill(RED, |x, y| disc(x, y) - NEEDS_YOU_RADIUS * s);
    }
    img
}

/// Where the "needs you" mark is, in 64-pixel units.
const NEEDS_YOU_CENTRE: f32 = 48.0;
const NEEDS_YOU_RADIUS: f32 = 11.0;

/// The macOS menu-bar template of an icon: black where the art is coloured, transparent
/// where it is white (the count and the board lines cut out), so the system tints it.
pub fn template(img: &Rgba) -> Rgba {
    let mut out = img.clone();
    for px in out.pixels.chunks_exact_mut(4) {
        let whiteness = ((px[0].min(px[1]).min(px[2]) as f32 - 128.0) / 127.0).clamp(0.0, 1.0);
        px[3] = (px[3] as f32 * (1.0 - whiteness)) as u8;
        px[0] = 0;
        px[1] = 0;
        px[2] = 0;
    }
    out
}

/// Desaturates and lightens every pixel (keeping alpha): the "not working" look.
fn grey_out(img: &mut Rgba) {
    for px in img.pixels.chunks_exact_mut(4) {
        let luma = 0.299 * px[0] as f32 + 0.587 * px[1] as f32 + 0.114 * px[2] as f32;
        let grey = (luma * 0.6 + 255.0 * 0.25).min(255.0) as u8;
        px[0] = grey;
        px[1] = grey;
        px[2] = grey;
        px[3] = (px[3] as f32 * 0.8) as u8;
    }
}

/// Writes `img` as a PNG file.
pub fn write_png(img: &Rgba, path: &std::path::Path) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, img.width, img.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&img.pixels)
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}

/// Writes the tray art and the app icon into `dir` (what `icons/` holds).
pub fn render_all(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let variants = [
        ("tray-idle", "", false, false, false),
        ("tray-count-1", "1", false, false, false),
        ("tray-count-42", "42", false, false, false),
        ("tray-count-99plus", "99+", false, false, false),
        ("tray-grey", "", true, false, false),
        ("tray-warning", "3", false, true, false),
        ("tray-grey-warning", "", true, true, false),
        ("tray-needs-you", "", false, false, true),
        ("tray-needs-you-count-3", "3", false, false, true),
        ("tray-needs-you-warning", "42", false, true, true),
        ("tray-grey-needs-you", "", true, false, true),
    ];
    for (name, count, greyed, warning, needs_you) in variants {
        let state = IconState {
            count_text: count.into(),
            greyed,
            warning,
            needs_you,
        };
        let path = dir.join(format!("{name}.png"));
        write_png(&render(&state, TRAY_SIZE), &path)?;
        written.push(path);
    }
    let template_path = dir.join("tray-template-macos.png");
    write_png(
        &template(&render(&IconState::default(), TRAY_SIZE)),
        &template_path,
    )?;
    written.push(template_path);
    let app = IconState::default();
    for size in [32, 128, 256, 512] {
        let path = dir.join(format!("app-{size}.png"));
        write_png(&render(&app, size), &path)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(count: &str, greyed: bool, warning: bool) -> IconState {
        IconState {
            count_text: count.into(),
            greyed,
            warning,
            needs_you: false,
        }
    }

    fn waiting(count: &str, greyed: bool, warning: bool) -> IconState {
        IconState {
            needs_you: true,
            ..state(count, greyed, warning)
        }
    }

    fn is_red(px: [u8; 4]) -> bool {
        px[0] > 180 && px[1] < 80 && px[2] < 100 && px[3] > 200
    }

    #[test]
    fn the_needs_you_mark_is_red_at_16_px_in_every_state() {
        for base in [
            state("", false, false),
            state("7", false, false),
            state("99+", false, false),
            state("", true, false),
            state("3", false, true),
            state("", true, true),
        ] {
            let with = IconState {
                needs_you: true,
                ..base.clone()
            };
            for size in [16u32, 22, 32, 64] {
                let img = render(&with, size);
                let c = (NEEDS_YOU_CENTRE * size as f32 / 64.0) as u32;
                assert!(
                    is_red(img.get(c, c)),
                    "{with:?} at {size} px: {:?}",
                    img.get(c, c)
                );
                let red = img
                    .pixels
                    .chunks_exact(4)
                    .filter(|p| is_red([p[0], p[1], p[2], p[3]]))
                    .count();
                let without = render(&base, size);
                let red_without = without
                    .pixels
                    .chunks_exact(4)
                    .filter(|p| is_red([p[0], p[1], p[2], p[3]]))
                    .count();
                assert_eq!(red_without, 0, "{base:?} has no red");
                // At least a 3-pixel-wide disc at 16 px (7 pixels or more).
                assert!(
                    red >= (size * size / 40) as usize,
                    "{with:?} at {size} px: {red} red pixels"
                );
            }
        }
    }

    #[test]
    fn the_mark_is_not_the_count_and_the_count_stays_readable_beside_it() {
        let mark = render(&waiting("", false, false), TRAY_SIZE);
        // White outside the mark's ring: the count (or the board art).
        let white_outside = |img: &Rgba| {
            let mut n = 0;
            for y in 0..img.height {
                for x in 0..img.width {
                    let d = ((x as f32 + 0.5 - NEEDS_YOU_CENTRE).powi(2)
                        + (y as f32 + 0.5 - NEEDS_YOU_CENTRE).powi(2))
                    .sqrt();
                    let [r, g, b, a] = img.get(x, y);
                    if d > NEEDS_YOU_RADIUS + 4.0 && r > 240 && g > 240 && b > 240 && a > 240 {
                        n += 1;
                    }
                }
            }
            n
        };
        for count in ["1", "9", "42", "99+"] {
            let plain = render(&state(count, false, false), TRAY_SIZE);
            let both = render(&waiting(count, false, false), TRAY_SIZE);
            assert!(
                differing(&mark, &plain) > 10,
                "{count}: the mark is not a count"
            );
            assert!(
                differing(&both, &plain) > 10,
                "{count}: the mark shows with a count"
            );
            // The count moved aside keeps (nearly) all its pixels clear of the mark.
            let kept = white_outside(&both);
            let whole = white_outside(&plain);
            assert!(
                kept * 10 >= whole * 9,
                "{count}: {kept} of the count's {whole} white pixels clear of the mark"
            );
        }
    }

    fn differing(a: &Rgba, b: &Rgba) -> usize {
        a.pixels
            .chunks_exact(4)
            .zip(b.pixels.chunks_exact(4))
            .filter(|(p, q)| p != q)
            .count()
    }

    #[test]
    fn every_state_draws_a_different_icon() {
        let states = [
            state("", false, false),
            state("1", false, false),
            state("9", false, false),
            state("99", false, false),
            state("99+", false, false),
            state("", true, false),
            state("", false, true),
            state("", true, true),
            waiting("", false, false),
            waiting("3", false, false),
            waiting("", true, false),
            waiting("", true, true),
        ];
        let images: Vec<Rgba> = states.iter().map(|s| render(s, TRAY_SIZE)).collect();
        for i in 0..images.len() {
            for j in i + 1..images.len() {
                assert!(
                    differing(&images[i], &images[j]) > 10,
                    "{:?} and {:?} look the same",
                    states[i],
                    states[j]
                );
            }
        }
    }

    #[test]
    fn the_count_is_white_on_blue_and_grey_has_no_colour() {
        let one = render(&state("1", false, false), TRAY_SIZE);
        // The middle column of the "1" is white; a corner inside the square is blue.
        assert_eq!(&one.get(32, 33)[..3], &WHITE);
        assert_eq!(&one.get(8, 56)[..3], &BLUE);
        assert_eq!(
            one.get(0, 0)[3],
            0,
            "outside the rounded corner is transparent"
        );
        let grey = render(&state("1", true, false), TRAY_SIZE);
        for px in grey.pixels.chunks_exact(4) {
            assert!(px[0] == px[1] && px[1] == px[2]);
        }
        let warn = render(&state("", true, true), TRAY_SIZE);
        let [r, g, b, _] = warn.get(42, 24);
        assert!(
            r > 200 && g > 120 && b < 60,
            "the warning stays amber when grey"
        );
    }

    #[test]
    fn the_template_cuts_the_count_out_of_a_black_square() {
        let img = template(&render(&state("1", false, false), TRAY_SIZE));
        assert_eq!(img.get(32, 33)[3], 0, "the count is transparent");
        assert_eq!(img.get(8, 56), [0, 0, 0, 255], "the square is black");
    }

    #[test]
    fn any_size_renders() {
        for size in [16, 22, 32, 256] {
            let img = render(&state("99+", false, true), size);
            assert_eq!(img.pixels.len(), (size * size * 4) as usize);
        }
    }
}

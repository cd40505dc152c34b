//! A screenshot's pixels: a PNG (as `import` or a shell's screenshot call writes it) decoded
//! to 8-bit RGB, row by row, and the few reads the desktop tests make of it; and whether an
//! icon as a tray host reads it (`IconPixmap`) carries the tray's "needs you" mark.

use std::path::Path;

pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

impl Rect {
    pub fn center(&self) -> (u32, u32) {
        (self.x + self.w / 2, self.y + self.h / 2)
    }
}

impl Picture {
    /// Decodes the PNG at `path` (grey, palette and 16-bit images made 8-bit RGB).
    pub fn load(path: &Path) -> Picture {
        let file = std::fs::File::open(path)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
        let mut decoder = png::Decoder::new(file);
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        let mut rgb = Vec::with_capacity((info.width * info.height * 3) as usize);
        for px in buf[..info.buffer_size()].chunks_exact(channels) {
            match channels {
                1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                _ => rgb.extend_from_slice(&px[..3]),
            }
        }
        Picture {
            width: info.width,
            height: info.height,
            rgb,
        }
    }

    pub fn px(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// The pixels of `r`, row by row.
    pub fn region(&self, r: Rect) -> Vec<[u8; 3]> {
        let mut out = Vec::new();
        for y in r.y..r.y + r.h {
            for x in r.x..r.x + r.w {
                out.push(self.px(x, y));
            }
        }
        out
    }
}

/// Whether an icon of `w`×`h` pixels as a StatusNotifierItem host reads it (`IconPixmap`: ARGB,
/// 8 bits each, row by row) shows the tray's "needs you" mark: the red disc, bottom right.
pub fn needs_you_mark(w: u32, h: u32, argb: &[u8]) -> bool {
    let (cx, cy) = (w * 48 / 64, h * 48 / 64);
    let red = |x: u32, y: u32| {
        let i = ((y * w + x) * 4) as usize;
        let Some(&[a, r, g, b]) = argb.get(i..i + 4) else {
            return false;
        };
        a > 200 && r > 180 && g < 80 && b < 100
    };
    red(cx, cy) && red(cx.saturating_sub(w / 16), cy) && red(cx, cy.saturating_sub(h / 16))
}

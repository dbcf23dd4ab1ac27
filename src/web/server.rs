//! The HTTP side: the embedded page (nothing else is served) and the
//! WebSocket, one task per page. The task checks what a page sends (size,
//! rate, shape) before any hub sees it, and carries the hubs' messages back.

use super::frames::{FrameCheck, Violation};
use super::play::{Connect, Disconnect, FromPage, PlayHub};
use super::proto::{self, ClientMsg, ErrorCode, ProtoError, RateLimiter};
use super::watch::{Subscribe, Unsubscribe, WatchHub};
use actix::Addr;
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, App, FromRequest, HttpRequest, HttpResponse, HttpServer};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, ProtocolError};
use futures_util::{Stream, StreamExt};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

/// The largest WebSocket frame (and fragmented message) read at all; a
/// header announcing more closes the connection (code 1009) before any of
/// it is buffered. Messages between [`proto::MAX_MESSAGE`] and this get an
/// error back and the connection stays.
pub const MAX_FRAME: usize = 16 * 1024;
/// Messages a page may send at once, and per second after that: a person
/// clicks a few times a second at most.
pub const BURST: u32 = 20;
pub const PER_SECOND: u32 = 10;
/// Refused messages (over the rate, malformed) before the server hangs up.
pub const MAX_STRIKES: u32 = 100;
/// Server messages waiting for a slow page before newer ones are dropped.
const OUTBOX: usize = 64;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/style.css");

#[derive(Clone)]
struct Hubs {
    play: Addr<PlayHub>,
    watch: Addr<WatchHub>,
    next: Arc<AtomicU64>,
    /// `d` of the `hello` every page gets first.
    hello: Arc<str>,
    /// Bound to loopback: only requests naming this machine are served
    /// ([`proto::host_allowed`]).
    loopback_only: bool,
}

fn asset(body: &'static str, kind: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(kind)
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("Content-Security-Policy", "default-src 'self'; connect-src 'self'"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(body)
}

async fn ws(req: HttpRequest, body: web::Payload, hubs: web::Data<Hubs>) -> actix_web::Result<HttpResponse> {
    let text = |h: header::HeaderName| req.headers().get(h).and_then(|v| v.to_str().ok());
    if !proto::host_allowed(text(header::HOST), hubs.loopback_only) {
        return Ok(HttpResponse::Forbidden().body("this server answers to localhost only"));
    }
    if !proto::origin_allowed(text(header::ORIGIN), text(header::HOST)) {
        return Ok(HttpResponse::Forbidden().body("this page's WebSocket takes connections from its own page only"));
    }
    let verdict = Rc::new(RefCell::new(None));
    let checked = Checked {
        inner: body,
        check: FrameCheck::new(MAX_FRAME),
        verdict: verdict.clone(),
    };
    let payload: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(checked);
    let mut checked = actix_web::dev::Payload::Stream { payload };
    let body = web::Payload::from_request(&req, &mut checked).await?;
    let (res, session, stream) = actix_ws::handle(&req, body)?;
    let stream = stream
        .max_frame_size(MAX_FRAME)
        .aggregate_continuations()
        .max_continuation_size(MAX_FRAME);
    let conn = hubs.next.fetch_add(1, Ordering::Relaxed);
    actix_web::rt::spawn(connection(conn, session, stream, verdict, hubs.get_ref().clone()));
    Ok(res)
}

/// The WebSocket's incoming bytes, each chunk read by [`FrameCheck`] before
/// actix-ws buffers it: on a violation the stream fails at once (and says
/// why in `verdict`), so no client can make the server hold a frame's
/// announced length. Valid traffic passes through untouched.
struct Checked {
    inner: web::Payload,
    check: FrameCheck,
    verdict: Rc<RefCell<Option<Violation>>>,
}

impl Stream for Checked {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.verdict.borrow().is_some() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(bytes))) => match self.check.feed(&bytes) {
                Ok(()) => Poll::Ready(Some(Ok(bytes))),
                Err(v) => {
                    let e = std::io::Error::new(std::io::ErrorKind::InvalidData, v.clone());
                    *self.verdict.borrow_mut() = Some(v);
                    Poll::Ready(Some(Err(PayloadError::Io(e))))
                }
            },
            other => other,
        }
    }
}

/// Why a stream error ends the connection: the frame check's verdict when it
/// has one, else what the codec found after the frame was read.
fn violation(found: Option<Violation>, e: &ProtocolError) -> Violation {
    if let Some(v) = found {
        return v;
    }
    match e {
        ProtocolError::Overflow => Violation::TooLarge {
            announced: None,
            limit: MAX_FRAME,
        },
        ProtocolError::Io(io)
            if io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<std::str::Utf8Error>().is_some()) =>
        {
            Violation::InvalidUtf8
        }
        other => Violation::Protocol(other.to_string()),
    }
}

/// What a connection that broke the protocol is told, and the close frame
/// that ends it: the code says what happened (1009 size, 1002 protocol,
/// 1007 invalid UTF-8).
fn hang_up(v: &Violation) -> (ProtoError, CloseReason) {
    let (code, close_code) = match v {
        Violation::TooLarge { .. } => (ErrorCode::TooLarge, CloseCode::Size),
        Violation::Protocol(_) => (ErrorCode::Malformed, CloseCode::Protocol),
        Violation::InvalidUtf8 => (ErrorCode::Malformed, CloseCode::Invalid),
    };
    // A close frame's reason has room for 123 bytes.
    let mut why = v.describe();
    while why.len() > 120 {
        why.pop();
    }
    let reason = CloseReason {
        code: close_code,
        description: Some(why),
    };
    (ProtoError::new(code, v.describe()), reason)
}

/// One page's connection, until either side closes it.
async fn connection(
    conn: u64,
    mut session: actix_ws::Session,
    mut stream: actix_ws::AggregatedMessageStream,
    verdict: Rc<RefCell<Option<Violation>>>,
    hubs: Hubs,
) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(OUTBOX);
    hubs.play.do_send(Connect { conn, out: tx.clone() });
    let mut ok = session.text(&*hubs.hello).await.is_ok();
    let mut rate = RateLimiter::new(BURST, PER_SECOND, Instant::now());
    let mut strikes = 0u32;
    let mut close = None;
    while ok {
        tokio::select! {
            m = stream.next() => {
                let refused = match m {
                    Some(Ok(AggregatedMessage::Text(t))) => {
                        if !rate.allow(Instant::now()) {
                            Some(ProtoError::new(ErrorCode::Rate, format!("more than {PER_SECOND} messages a second; slow down")))
                        } else {
                            match proto::decode(&t) {
                                Ok(ClientMsg::Watch) => {
                                    hubs.watch.do_send(Subscribe { conn, out: tx.clone() });
                                    None
                                }
                                Ok(msg) => {
                                    hubs.play.do_send(FromPage { conn, msg });
                                    None
                                }
                                Err(e) => Some(e),
                            }
                        }
                    }
                    Some(Ok(AggregatedMessage::Binary(_))) => {
                        Some(ProtoError::new(ErrorCode::Malformed, "text messages only (JSON)"))
                    }
                    Some(Ok(AggregatedMessage::Ping(b))) => {
                        ok = session.pong(&b).await.is_ok();
                        None
                    }
                    Some(Ok(AggregatedMessage::Pong(_))) => None,
                    Some(Ok(AggregatedMessage::Close(_))) | None => break,
                    Some(Err(e)) => {
                        // A frame over MAX_FRAME or one no client may send:
                        // say why, then hang up with the code that says what happened.
                        let v = violation(verdict.borrow_mut().take(), &e);
                        let (error, reason) = hang_up(&v);
                        let _ = session.text(error.encode()).await;
                        close = Some(reason);
                        break;
                    }
                };
                if let Some(e) = refused {
                    strikes += 1;
                    ok = session.text(e.encode()).await.is_ok();
                    if strikes >= MAX_STRIKES {
                        close = Some(CloseReason { code: CloseCode::Policy, description: Some("too many refused messages".into()) });
                        break;
                    }
                }
            }
            out = rx.recv() => match out {
                Some(text) => ok = session.text(text).await.is_ok(),
                None => break,
            }
        }
    }
    hubs.play.do_send(Disconnect { conn });
    hubs.watch.do_send(Unsubscribe { conn });
    let _ = session.close(close).await;
}

/// A started server: where it listens, and its hubs.
pub struct Started {
    pub addr: SocketAddr,
    pub server: actix_web::dev::Server,
    pub watch: Addr<WatchHub>,
}

/// Binds `bind` and builds the server (to be awaited or spawned) on the
/// current actix System.
pub fn start(bind: SocketAddr, play: PlayHub, watch: WatchHub, title: String) -> std::io::Result<Started> {
    use actix::Actor;
    let op = play.opponent();
    let hello = proto::encode(
        "hello",
        None,
        &serde_json::json!({
            "protocol": proto::PROTOCOL,
            "title": title,
            "player": op.map(|o| o.spec.name.clone()),
            "players": play.players().iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
            "views": play.players().iter().filter(|p| super::analysis::has_view(p)).map(|p| p.name.clone()).collect::<Vec<_>>(),
            "rows": op.map(|o| o.cfg.rows),
            "cols": op.map(|o| o.cfg.cols),
        }),
    );
    let hubs = Hubs {
        play: play.start(),
        watch: watch.start(),
        next: Arc::new(AtomicU64::new(1)),
        hello: hello.into(),
        loopback_only: bind.ip().is_loopback(),
    };
    let watch = hubs.watch.clone();
    let data = web::Data::new(hubs);
    let srv = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route(
                "/",
                web::get().to(|| async { asset(INDEX, "text/html; charset=utf-8") }),
            )
            .route(
                "/app.js",
                web::get().to(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }),
            )
            .route(
                "/style.css",
                web::get().to(|| async { asset(STYLE, "text/css; charset=utf-8") }),
            )
            .route("/ws", web::get().to(ws))
            .default_service(web::to(|| async { HttpResponse::NotFound().body("not found") }))
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .bind(bind)?;
    let addr = srv.addrs().first().copied().unwrap_or(bind);
    Ok(Started {
        addr,
        server: srv.run(),
        watch,
    })
}

//! macOS notifications through the User Notifications framework (`UNUserNotificationCenter`,
//! objc2 bindings: no C compiled at build time, so the foreign-target lint covers it).
//!
//! The framework attributes notifications to the process's bundle: the tray is a sidecar in
//! `Fabric Companion.app/Contents/MacOS/`, so its main bundle is the app's. Run outside a
//! bundle (a development build), the framework would raise an Objective-C exception; we look
//! for a bundle identifier first and report notifications as unavailable instead. The tray's
//! tao event loop is the app's run loop, which delivers the delegate's click callbacks.
//!
//! A session's notification uses the session id as its identifier: a new one replaces it on
//! screen, and withdrawing removes it from Notification Centre. Clicking one runs `on_click`
//! (the tray opens the dashboard). Permission is asked once, at the first notification.
//!
//! Only compiled here (for `aarch64-apple-darwin`), never run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use block2::RcBlock;
use objc2::rc::Retained;
use objc2::runtime::{Bool, NSObject, NSObjectProtocol, ProtocolObject};
use objc2::{AllocAnyThread, DefinedClass, define_class, msg_send};
use objc2_foundation::{NSArray, NSBundle, NSError, NSString};
use objc2_user_notifications::{
    UNAuthorizationOptions, UNMutableNotificationContent, UNNotification,
    UNNotificationPresentationOptions, UNNotificationRequest, UNNotificationResponse,
    UNUserNotificationCenter, UNUserNotificationCenterDelegate,
};

/// Why a notification could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum MacError {
    #[error("not running inside an app bundle: macOS shows notifications only for bundled apps")]
    NoBundle,
}

/// What the delegate needs: the click action.
pub struct DelegateIvars {
    on_click: Arc<dyn Fn() + Send + Sync>,
}

define_class!(
    // SAFETY: NSObject has no subclassing requirements; the class does not implement Drop.
    #[unsafe(super(NSObject))]
    #[name = "FabricTrayNotificationDelegate"]
    #[ivars = DelegateIvars]
    struct Delegate;

    unsafe impl NSObjectProtocol for Delegate {}

    unsafe impl UNUserNotificationCenterDelegate for Delegate {
        /// A notification arriving while the tray is "frontmost" (it never has windows, but
        /// say so anyway): show it as a banner and keep it in the list.
        #[unsafe(method(userNotificationCenter:willPresentNotification:withCompletionHandler:))]
        fn will_present(
            &self,
            _center: &UNUserNotificationCenter,
            _notification: &UNNotification,
            completion: &block2::DynBlock<dyn Fn(UNNotificationPresentationOptions)>,
        ) {
            completion
                .call((UNNotificationPresentationOptions::Banner
                    | UNNotificationPresentationOptions::List,));
        }

        /// A click on one of our notifications.
        #[unsafe(method(userNotificationCenter:didReceiveNotificationResponse:withCompletionHandler:))]
        fn did_receive(
            &self,
            _center: &UNUserNotificationCenter,
            _response: &UNNotificationResponse,
            completion: &block2::DynBlock<dyn Fn()>,
        ) {
            (self.ivars().on_click)();
            completion.call(());
        }
    }
);

impl Delegate {
    fn new(on_click: Arc<dyn Fn() + Send + Sync>) -> Retained<Self> {
        let this = Self::alloc().set_ivars(DelegateIvars { on_click });
        // SAFETY: NSObject's designated initialiser, on a freshly allocated object.
        unsafe { msg_send![super(this), init] }
    }
}

/// The tray's handle on Notification Centre.
pub struct MacNotifier {
    center: Retained<UNUserNotificationCenter>,
    /// Kept alive here: the centre holds its delegate weakly.
    _delegate: Retained<Delegate>,
    asked: AtomicBool,
}

impl MacNotifier {
    /// The centre for this app's bundle, with our click delegate; `Err` outside a bundle.
    pub fn new(on_click: Arc<dyn Fn() + Send + Sync>) -> Result<Self, MacError> {
        if NSBundle::mainBundle().bundleIdentifier().is_none() {
            return Err(MacError::NoBundle);
        }
        let center = UNUserNotificationCenter::currentNotificationCenter();
        let delegate = Delegate::new(on_click);
        center.setDelegate(Some(ProtocolObject::from_ref(&*delegate)));
        Ok(MacNotifier {
            center,
            _delegate: delegate,
            asked: AtomicBool::new(false),
        })
    }

    /// Asks for permission to show alerts, once per run (macOS remembers the answer).
    fn ask_once(&self) {
        if self.asked.swap(true, Ordering::Relaxed) {
            return;
        }
        let answered = RcBlock::new(|granted: Bool, _error: *mut NSError| {
            if !granted.as_bool() {
                tracing::warn!(
                    "notifications are turned off for Fabric Companion in System Settings"
                );
            }
        });
        self.center
            .requestAuthorizationWithOptions_completionHandler(
                UNAuthorizationOptions::Alert | UNAuthorizationOptions::Sound,
                &answered,
            );
    }

    /// Shows (or replaces) the notification with this identifier.
    pub fn show(&self, identifier: &str, title: &str, body: &str) {
        self.ask_once();
        let content = UNMutableNotificationContent::new();
        content.setTitle(&NSString::from_str(title));
        content.setBody(&NSString::from_str(body));
        let request = UNNotificationRequest::requestWithIdentifier_content_trigger(
            &NSString::from_str(identifier),
            &content,
            None,
        );
        let added = RcBlock::new(|error: *mut NSError| {
            // SAFETY: the framework passes either null or a valid NSError for this call.
            if let Some(error) = unsafe { error.as_ref() } {
                tracing::warn!(
                    error = %error.localizedDescription(),
                    "cannot show a desktop notification; carrying on without"
                );
            }
        });
        self.center
            .addNotificationRequest_withCompletionHandler(&request, Some(&added));
    }

    /// Removes the notification with this identifier from the screen and the list.
    pub fn withdraw(&self, identifier: &str) {
        let ids = NSArray::from_retained_slice(&[NSString::from_str(identifier)]);
        self.center
            .removeDeliveredNotificationsWithIdentifiers(&ids);
        self.center
            .removePendingNotificationRequestsWithIdentifiers(&ids);
    }
}

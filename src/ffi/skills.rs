//! Skills (`io.modelcontextprotocol/skills`) through the C ABI: the listing, one
//! skill's entry, a file of a skill read and verified, a directory of a skill.

use std::ffi::c_char;

use super::boundary::status;
use super::client::{control_from, mcpc_call_opts_t, mcpc_client_t, ClientRef};
use super::content::{mcpc_contents_t, ContentsData};
use super::cstr::{str_in, string_out};
use super::ptr::{self, Out};
use crate::client::Control;
use crate::error::{mcpc_status_t, Result, Status};

/// Runs `f` with the client ready for a blocking call, its options read.
///
/// # Safety
/// `client` is NULL or live; `opts` is NULL or an initialised mcpc_call_opts_t.
unsafe fn with_client<T>(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    f: impl FnOnce(&ClientRef<'_>, &Control) -> Result<T>,
) -> Result<T> {
    // SAFETY: per the contract.
    let (c, mut ctl) = unsafe { (ptr::get(client)?, control_from(opts)?) };
    let cl = c.client_ready(&mut ctl);
    f(&cl, &ctl)
}

/// Lists the server's skills (`skills/list`, every page): a JSON array of the entries
/// as the server sent them (`uri`, `frontmatter`, `resources`), each checked first
/// (its name, description, files within the skill with a sha256 digest and a size,
/// the extension's limits); an entry that fails is left out (and logged), as it must
/// not be loaded. The listing is kept for its `ttlMs` (mcpc_client_forget_lists drops
/// it). Nothing is fetched but the listing. The entries listed are held, so that
/// their files can be read (mcpc_client_read_skill_file).
/// Ownership: `opts` is read during the call; on success `*out_json` is the caller's:
/// free it with mcpc_string_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_NOT_SUPPORTED (the server offers no
/// skills extension), MCPC_ERR_PROTOCOL, MCPC_ERR_RPC, MCPC_ERR_CURSOR_REPEATED,
/// MCPC_ERR_TOO_MANY_PAGES, MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED.
///
/// # Safety
/// `client` is NULL or live; `opts` is NULL or initialised; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_list_skills(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_list_skills", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let json = unsafe {
            with_client(client, opts, |cl, ctl| {
                crate::drive::block_on_driven(std::pin::pin!(cl.list_skills(ctl)), cl.driver())?
            })
        }?;
        out.set(string_out(&json));
        Ok(Status::MCPC_OK)
    })
}

/// Gets the entry of the skill whose `SKILL.md` is `uri` (`skills/get`), listed or
/// not: the entry as the server sent it, checked as a listing's are, and held in place
/// of what was held for it (the way to refresh a skill after a verification failure).
/// Ownership: as mcpc_client_list_skills.
/// Threads: as mcpc_client_list_skills.
/// Errors: as mcpc_client_list_skills, and MCPC_ERR_INVALID_UTF8; MCPC_ERR_RPC
/// (-32602) for a skill the server does not have; MCPC_ERR_PROTOCOL for an entry that
/// fails its checks or names another skill.
///
/// # Safety
/// As mcpc_client_list_skills; `uri` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_get_skill(
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_get_skill", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let uri = unsafe { str_in(uri, "uri") }?;
        // SAFETY: per the contract.
        let json = unsafe {
            with_client(client, opts, |cl, ctl| {
                crate::drive::block_on_driven(std::pin::pin!(cl.get_skill(uri, ctl)), cl.driver())?
            })
        }?;
        out.set(string_out(&json));
        Ok(Status::MCPC_OK)
    })
}

/// Reads the file `uri` of a skill listed (or got) before, and hands it out only once
/// it is verified: its size and its sha256 digest are those of the skill's entry, and
/// for the skill's `SKILL.md` its YAML frontmatter equals the entry's, field by field.
/// A file no held entry lists is refused before anything is sent, as is any file of a
/// skill whose files are `"dynamic"` (they cannot be verified).
/// Ownership: `uri` and `opts` are read during the call; on success `*out_contents` is
/// the caller's: free it with mcpc_contents_free.
/// Threads: as mcpc_client_list_skills.
/// Errors: MCPC_ERR_INTEGRITY (any verification failure; nothing is handed out),
/// MCPC_ERR_NOT_SUPPORTED (no skills extension), and those of mcpc_client_read_resource.
///
/// # Safety
/// As mcpc_client_get_skill; `out_contents` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_read_skill_file(
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_contents: *mut *mut mcpc_contents_t,
) -> mcpc_status_t {
    status("mcpc_client_read_skill_file", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_contents, "out_contents") }?;
        // SAFETY: per the contract.
        let uri = unsafe { str_in(uri, "uri") }?;
        // SAFETY: per the contract.
        let contents = unsafe {
            with_client(client, opts, |cl, ctl| {
                crate::drive::block_on_driven(std::pin::pin!(cl.read_skill_file(uri, ctl)), cl.driver())?
            })
        }?;
        out.set_handle(ContentsData::new(contents)?);
        Ok(Status::MCPC_OK)
    })
}

/// Lists the directory `uri` of a held skill (`resources/directory/read`, every page):
/// a JSON array of its direct children as the server sent them (subdirectories have
/// `mimeType` "inode/directory"). Only when the server declared `directoryRead`; what
/// it lists is not added to the skill's files (get the skill again for that).
/// Ownership: as mcpc_client_list_skills.
/// Threads: as mcpc_client_list_skills.
/// Errors: MCPC_ERR_NOT_SUPPORTED (no skills extension, or no `directoryRead`),
/// MCPC_ERR_INTEGRITY (`uri` is in no held skill), and those of mcpc_client_list_skills.
///
/// # Safety
/// As mcpc_client_get_skill.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_read_skill_directory(
    client: *const mcpc_client_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_read_skill_directory", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let uri = unsafe { str_in(uri, "uri") }?;
        // SAFETY: per the contract.
        let json = unsafe {
            with_client(client, opts, |cl, ctl| {
                crate::drive::block_on_driven(std::pin::pin!(cl.read_skill_directory(uri, ctl)), cl.driver())?
            })
        }?;
        out.set(string_out(&json));
        Ok(Status::MCPC_OK)
    })
}
